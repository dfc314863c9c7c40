<?php
// Bench scenario "mixed": each request sleeps ?us= microseconds inside the worker (at most
// one second), so fast and slow requests differ only by how long they hold the worker.
// FERRY_BENCH_SDK points at another revision's SDK when the harness compares revisions.
declare(strict_types=1);

require (getenv('FERRY_BENCH_SDK') ?: dirname(__DIR__, 3) . '/php/worker/autoload.php');

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static function (Request $request): Response {
    $us = min(max((int) ($request->query()['us'] ?? 0), 0), 1_000_000);
    if ($us > 0) {
        usleep($us);
    }
    return Response::text("slept {$us} us\n");
});
