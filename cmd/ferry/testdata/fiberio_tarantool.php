<?php

declare(strict_types=1);

// pool.fiber_io with Tarantool (TestFiberIOTarantool*) through SyncIproto, a synchronous
// client on stream_socket_client() that knows nothing of Fibers.
require __DIR__ . '/../../../php/worker/autoload.php';
require __DIR__ . '/SyncIproto.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    $args = json_decode($q['args'] ?? '[]', true);
    try {
        switch ($request->path) {
            case '/hello':
                return Response::text('hello');
            case '/call':
                $c = new SyncIproto($q['addr'] ?? '', (float) ($q['to'] ?? 5));

                return Response::text(json_encode($c->call($q['fn'] ?? '', $args)));
            case '/shared':
                // One connection for every request of the worker, kept as an app keeps its
                // client in a static or a container.
                static $shared = null;
                $shared ??= new SyncIproto($q['addr'] ?? '');

                return Response::text(json_encode($shared->call($q['fn'] ?? '', $args)));
        }
    } catch (\Throwable $e) {
        return Response::text('error: ' . $e->getMessage());
    }

    return Response::text('not found', 404);
});
