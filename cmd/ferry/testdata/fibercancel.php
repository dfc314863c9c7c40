<?php

declare(strict_types=1);

// exec_ttl in Fiber mode for TestFiberExecTTL*: /hang waits on a server that never
// answers (a hooked read), /stubborn catches the cancellation and then blocks the worker
// outside the loop, /pid says which process served.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\JobCancelled;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    if ($request->path === '/pid') {
        return Response::text((string) getmypid());
    }
    if ($request->path === '/hang' || $request->path === '/stubborn') {
        $c = stream_socket_client('tcp://' . $q['addr'], $errno, $errstr, 5);
        fwrite($c, "hang\n");
        try {
            $line = fgets($c);
        } catch (JobCancelled $e) {
            if ($request->path === '/hang') {
                throw $e;
            }
            // Not on the loop: the worker can do nothing else until it is killed. (Not on
            // $c: a cancelled wait's socket is shut down, so it reads as EOF at once.)
            $c = stream_socket_client('tcp://' . $q['addr'], $errno, $errstr, 5);
            $r = [$c];
            $w = $x = null;
            stream_select($r, $w, $x, 60);

            return Response::text('survived');
        }

        return Response::text($line === false ? 'read failed' : $line);
    }

    return Response::text('fibercancel');
});
