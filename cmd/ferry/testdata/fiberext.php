<?php

declare(strict_types=1);

// Fiber mode for TestFiberModeRunsOnTheExtension: says whether ext/ferry's Fibers
// (Ferry\Ext\fiber_body()) or the PHP runner called the handler, and waits on the event
// loop when asked, so that other requests run meanwhile.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Loop;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $via = \in_array('Ferry\\Ext\\fiber_body', array_column(debug_backtrace(), 'function'), true) ? 'ext' : 'php';
    if ($request->path === '/sleep') {
        fwrite(STDERR, "sleeping in /sleep\n");
        Loop::sleep(((int) ($request->query()['ms'] ?? 1)) / 1000);

        return Response::text("slept via $via");
    }
    if ($request->path === '/echo') {
        echo 'echoed ';
    }

    return Response::text($via);
});
