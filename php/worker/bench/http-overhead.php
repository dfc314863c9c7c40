<?php

declare(strict_types=1);

/*
 * Prints the SDK's own cost per HTTP request (no Go server involved):
 *  1. in-process: HttpWorker::handle() raw vs through the PSR-7 bridge;
 *  2. through a real worker process over pipes: one request per round trip vs pipelined.
 *
 *     php php/worker/bench/http-overhead.php [requests]
 */

require dirname(__DIR__) . '/autoload.php';
require dirname(__DIR__) . '/tests/bootstrap.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Psr7\Psr7Worker;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Tests\Support\WorkerProcess;
use Ferry\Worker\Worker;

$n = (int) ($argv[1] ?? 20000);
$context = serialize([
    'method' => 'GET', 'uri' => '/?a=1', 'path' => '/', 'query' => 'a=1', 'protocol' => 'HTTP/1.1',
    'remote_addr' => '127.0.0.1:50000', 'host' => 'localhost:8080',
    'headers' => ['Accept' => ['*/*'], 'User-Agent' => ['bench']], 'cookies' => ['sid' => 'abc'],
    'form' => [], 'files' => [], 'parsed' => false,
]);
[$a] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$http = new HttpWorker(new Worker(new StreamRelay($a, $a)));
$psr7 = new Psr7Worker($http);

$measure = static function (\Closure $handler) use ($http, $context, $n): float {
    $capture = new SyncCapture();
    $start = hrtime(true);
    for ($i = 0; $i < $n; $i++) {
        $payload = new Payload('', $context, $i);
        $job = new Job($payload, $capture);
        $capture->begin($job);
        $http->handle($handler, $payload, $job);
        $capture->end($job);
    }

    return (hrtime(true) - $start) / 1e3 / $n;
};

$raw = $measure(static fn (Request $r): Response => Response::text('Hello, world'));
$bridged = $measure($psr7->adapt(
    static fn ($r) => new \Nyholm\Psr7\Response(200, ['Content-Type' => 'text/plain; charset=utf-8'], 'Hello, world')
));
printf("in-process, %d requests (decode context + handler + encode answer):\n", $n);
printf("  raw HttpWorker   %6.2f us/request\n", $raw);
printf("  PSR-7 bridge     %6.2f us/request  (%.2fx the raw cost)\n", $bridged, $bridged / $raw);

$hello = dirname(__DIR__, 3) . '/examples/hello/worker.php';
$roundTrips = static function (int $depth) use ($hello, $n, $context): float {
    $worker = new WorkerProcess($hello);
    $worker->handshake();
    $start = hrtime(true);
    for ($sent = 0; $sent < $n; $sent += $depth) {
        $batch = '';
        for ($i = 0; $i < $depth; $i++) {
            $batch .= WorkerProcess::job($sent + $i, '', $context);
        }
        $worker->send($batch);
        $worker->readFrames($depth);
    }
    $rate = $n / ((hrtime(true) - $start) / 1e9);
    $worker->sendStop();
    $worker->wait();

    return $rate;
};
$single = $roundTrips(1);
$pipelined = $roundTrips(16);
printf("worker process over pipes, %d requests, examples/hello/worker.php:\n", $n);
printf("  one at a time    %8.0f requests/s\n", $single);
printf("  pipelined x16    %8.0f requests/s  (%.2fx)\n", $pipelined, $pipelined / $single);
