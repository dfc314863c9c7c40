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
    if ($request->path === '/usleep') {
        $id = $q['id'] ?? 'x';
        fwrite(STDERR, "usleep start $id\n");
        usleep((int) ($q['ms'] ?? 1) * 1000);
        fwrite(STDERR, "usleep end $id\n");

        return Response::text('slept');
    }

    return Response::text('fiberio');
});
