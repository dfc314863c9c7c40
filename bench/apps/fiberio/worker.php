<?php

declare(strict_types=1);

/*
 * Bench scenario "fiberio" (issue 35). FIBERIO_CLIENT picks what a request waits through:
 *   sync   the blocking SyncTarantool client: sequential workers wait idle; with
 *          pool.fibers + pool.fiber_io its socket waits suspend only the job's Fiber
 *   async  Ferry's own connector (php/tarantool) on the worker's loop, one shared connection
 *   pdo    the PDO MySQL page (pdo.php), also what php-fpm serves
 * Every Tarantool request calls fio_wait(FIBERIO_WAIT), a fiber.sleep in the server.
 */

$root = dirname(__DIR__, 3);
require $root . '/php/worker/autoload.php';
require $root . '/php/tarantool/autoload.php';
require __DIR__ . '/SyncTarantool.php';
require __DIR__ . '/pdo.php';

use Ferry\Tarantool\Async\WorkerLoop;
use Ferry\Tarantool\Client;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$mode = (string) getenv('FIBERIO_CLIENT');
$uri = (string) getenv('FIBERIO_TARANTOOL');
$wait = (float) (getenv('FIBERIO_WAIT') ?: '0.02');

if ($mode === 'pdo') {
    $handler = static fn (Request $r): Response => Response::text(fiberio_pdo_page());
} elseif ($mode === 'async') {
    if (getenv('FERRY_FIBERS') === '1') {
        WorkerLoop::install();
    }
    $client = Client::connect($uri);
    $handler = static function (Request $r) use ($client, $wait): Response {
        return Response::text($client->call('fio_wait', [$wait, random_int(1, 1000)])[0] . "\n");
    };
} elseif ($mode === 'sync') {
    // A blocking connection serves one request at a time: each request takes an idle one (or
    // opens one) and gives it back, so concurrent Fibers never share a socket. Sequential
    // workers end up with one connection each.
    $idle = [];
    $handler = static function (Request $r) use (&$idle, $uri, $wait): Response {
        $c = array_pop($idle) ?? new SyncTarantool($uri);
        $row = $c->call('fio_wait', [$wait, random_int(1, 1000)]);
        $idle[] = $c;

        return Response::text($row[0] . "\n");
    };
} else {
    fwrite(STDERR, "FIBERIO_CLIENT must be sync, async or pdo, not '$mode'\n");
    exit(1);
}

HttpWorker::create()->run($handler);
