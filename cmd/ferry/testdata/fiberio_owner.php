<?php

declare(strict_types=1);

// TestFiberIOSharedPDO*: one PDO handle kept across requests, as a container keeps it.
// /begin opens a transaction on it and waits (a hooked read on the test's gate); /peek,
// another request meanwhile, uses the same handle.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

final class Shared
{
    public static ?PDO $db = null;
}

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    Shared::$db ??= new PDO('mysql:host=127.0.0.1;port=' . (int) $q['port'], 'root', '', [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    $db = Shared::$db;
    try {
        if ($request->path === '/begin') {
            $db->exec('CREATE DATABASE IF NOT EXISTS ferry');
            $db->exec('CREATE TABLE IF NOT EXISTS ferry.owner (v INT) ENGINE=InnoDB');
            $db->beginTransaction();
            $db->exec('INSERT INTO ferry.owner VALUES (1)');
            fwrite(STDERR, "in transaction\n");
            $gate = stream_socket_client('tcp://' . $q['gate'], $errno, $errstr, 5);
            fgets($gate);
            $db->rollBack();

            return Response::text('rolled back');
        }
        if ($request->path === '/peek') {
            return Response::text('saw ' . $db->query('SELECT COUNT(*) FROM ferry.owner')->fetchColumn());
        }
    } catch (PDOException $e) {
        Shared::$db = null;

        return Response::text('refused: ' . $e->getMessage());
    }

    return Response::text('owner');
});
