<?php
// Bench scenario "fibers": each request calls a Tarantool function that waits 5 ms.
// Classic mode waits with the worker idle; Fiber mode (FERRY_FIBERS=1) suspends only the
// job's Fiber and the worker's single event loop runs other jobs meanwhile.
declare(strict_types=1);

$root = dirname(__DIR__, 3);
require $root . '/php/worker/autoload.php';
require $root . '/php/tarantool/autoload.php';

use Ferry\Tarantool\Async\WorkerLoop;
use Ferry\Tarantool\Client;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

if (getenv('FERRY_FIBERS') === '1') {
    WorkerLoop::install();
}
$client = Client::connect((string) getenv('IOBOUND_TARANTOOL'));

HttpWorker::create()->run(static function (Request $r) use ($client): Response {
    $row = $client->call('io_wait', [random_int(1, 1000)]);
    return Response::text($row[0][1] . "\n");
});
