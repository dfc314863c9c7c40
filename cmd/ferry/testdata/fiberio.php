<?php

declare(strict_types=1);

// pool.fiber_io for TestFiberIO*: a client written the plain blocking way (PHP streams,
// usleep()) with nothing of Ferry's loop in it. With the hooks on, each request waits in
// its own Fiber and the others go on; with them off, each blocks the worker.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    if ($request->path === '/tcp') {
        $c = stream_socket_client('tcp://' . $q['addr'], $errno, $errstr, 5);
        if ($c === false) {
            return Response::text("connect failed: $errno $errstr", 502);
        }
        fwrite($c, ($q['id'] ?? 'x') . "\n");
        $line = fgets($c);
        fclose($c);

        return Response::text($line === false ? 'read failed' : trim($line));
    }
    if ($request->path === '/tls' || $request->path === '/starttls') {
        return tls($request->path, $q);
    }
    if (str_starts_with($request->path, '/pdo')) {
        return pdo($request->path, $q);
    }
    if ($request->path === '/usleep') {
        $id = $q['id'] ?? 'x';
        fwrite(STDERR, "usleep start $id\n");
        usleep((int) ($q['ms'] ?? 1) * 1000);
        fwrite(STDERR, "usleep end $id\n");

        return Response::text('slept');
    }

    return Response::text('fiberio');
});

/**
 * PDO MySQL (mysqlnd reads through PHP's tcp transport): /pdo runs a SLEEP tagged so that
 * /pdo-waiting can count the ones in progress and /pdo-release can end them (KILL QUERY).
 *
 * @param array<string, string> $q
 */
function pdo(string $path, array $q): Response
{
    $tag = preg_replace('/[^a-z0-9]/', '', $q['tag'] ?? 'x');
    $options = [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION];
    if (isset($q['ca'])) {
        // mysqlnd turns TLS on over its tcp:// stream (stream_socket_enable_crypto()'s path).
        $options += [PDO::MYSQL_ATTR_SSL_CA => $q['ca'], PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT => false];
    }
    $db = new PDO('mysql:host=127.0.0.1;port=' . (int) $q['port'], 'root', '', $options);
    if (isset($q['ca']) && $db->query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")->fetchColumn(1) === '') {
        return Response::text('the connection is not TLS', 500);
    }
    $like = $db->quote("SELECT SLEEP(%'$tag'%");
    if ($path === '/pdo-waiting') {
        return Response::text((string) $db->query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE $like")->fetchColumn());
    }
    if ($path === '/pdo-release') {
        foreach ($db->query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE $like")->fetchAll(PDO::FETCH_COLUMN) as $id) {
            $db->exec('KILL QUERY ' . (int) $id);
        }

        return Response::text('released');
    }
    try {
        $slept = $db->query('SELECT SLEEP(' . (float) ($q['s'] ?? 0.05) . "), '$tag'")->fetchColumn();
    } catch (PDOException $e) {
        // MariaDB fails a SLEEP that KILL QUERY ended (1317 Query execution was interrupted).
        return str_contains($e->getMessage(), '1317') ? Response::text('interrupted') : Response::text($e->getMessage(), 500);
    }

    return Response::text("slept $slept");
}

/**
 * The /tcp exchange over TLS, the server's certificate checked against ?ca: /tls connects
 * with tls://, /starttls connects with tcp:// and turns TLS on afterwards (as mysqlnd's SSL
 * and STARTTLS clients do).
 *
 * @param array<string, string> $q
 */
function tls(string $path, array $q): Response
{
    $ctx = stream_context_create(['ssl' => ['cafile' => $q['ca'], 'peer_name' => '127.0.0.1']]);
    $scheme = $path === '/tls' ? 'tls' : 'tcp';
    $c = stream_socket_client("$scheme://" . $q['addr'], $errno, $errstr, 5, STREAM_CLIENT_CONNECT, $ctx);
    if ($c === false) {
        return Response::text("connect failed: $errno $errstr", 502);
    }
    if ($path === '/starttls' && stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT) !== true) {
        return Response::text('handshake failed', 502);
    }
    fwrite($c, ($q['id'] ?? 'x') . "\n");
    $line = fgets($c);
    fclose($c);

    return Response::text($line === false ? 'read failed' : trim($line));
}
