<?php

declare(strict_types=1);

// The voting service on Ferry: the app, its autoloaders and one Tarantool connection are set
// up once per worker process and reused by every request. The connection opens on the first
// request and reopens by itself after a failure (Tarantool restarted: one 503, then back).
//
// With pool.fibers: true (FERRY_FIBERS=1) requests run concurrently in Fibers and the
// connector runs on the worker's event loop: while one request waits for Tarantool the
// process serves others, and their Tarantool requests share the connection and its writes.
require __DIR__ . '/../../php/worker/autoload.php';
require __DIR__ . '/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Voting\App;
use Voting\FerryAdapter;
use Voting\Store;

if (getenv('FERRY_FIBERS') === '1') {
    // One event loop for the relay and Tarantool: a job waiting on Tarantool lets others run.
    \Ferry\Tarantool\Async\WorkerLoop::install();
}
$app = new App(Store::fromEnv(persistent: false));

HttpWorker::create()->run(static fn (Request $r): Response => FerryAdapter::response($app->handle(FerryAdapter::request($r))));
