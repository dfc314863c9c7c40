<?php

declare(strict_types=1);

/*
 * What Fiber mode costs a worker over sequential mode, on the hello worker without the Go
 * server: the test harness plays the server over fd 3/4 and sends pipelined hello requests
 * to a real examples/hello/worker.php process, once with FERRY_FIBERS=0 and once with 1,
 * alternating round by round. The figure is the worker's own CPU time per request
 * (/proc/<pid>/schedstat, nanoseconds), which other load on the machine disturbs less
 * than wall time.
 *
 *     php php/worker/bench/fiber-overhead.php [requests per round] [rounds] [pipeline depth]
 */

require dirname(__DIR__) . '/autoload.php';
require dirname(__DIR__) . '/tests/bootstrap.php';

use Ferry\Worker\Tests\Support\WorkerProcess;

$n = (int) ($argv[1] ?? 20000);
$rounds = (int) ($argv[2] ?? 7);
$depth = (int) ($argv[3] ?? 16);
$context = serialize([
    'method' => 'GET', 'uri' => '/', 'path' => '/', 'query' => '', 'protocol' => 'HTTP/1.1',
    'remote_addr' => '127.0.0.1:50000', 'host' => 'localhost:8080',
    'headers' => ['Accept' => ['*/*'], 'User-Agent' => ['bench']], 'cookies' => [],
    'form' => [], 'files' => [], 'parsed' => false,
]);
$hello = dirname(__DIR__, 3) . '/examples/hello/worker.php';

$cpuNs = static function (int $pid): int {
    return (int) explode(' ', (string) file_get_contents("/proc/$pid/schedstat"))[0];
};

$batch = static function (WorkerProcess $worker, int $from, int $count) use ($context, $depth): void {
    for ($sent = 0; $sent < $count; $sent += $depth) {
        $bytes = '';
        for ($i = 0; $i < $depth; $i++) {
            $bytes .= WorkerProcess::job(($from + $sent + $i) % 1000000 + 1, '', $context);
        }
        $worker->send($bytes);
        $worker->readFrames($depth);
    }
};

// One round: a fresh worker, warmed up, then $n requests measured.
$round = static function (bool $fibers) use ($hello, $n, $batch, $cpuNs): float {
    $worker = new WorkerProcess($hello, ['FERRY_FIBERS' => $fibers ? '1' : '0'], 'fds');
    $worker->handshake();
    $batch($worker, 0, 2000);
    $pid = $worker->pid();
    $before = $cpuNs($pid);
    $batch($worker, 2000, $n);
    $used = $cpuNs($pid) - $before;
    $worker->sendStop();
    $worker->wait();

    return $used / 1e3 / $n;
};

$summary = static function (array $values): string {
    sort($values);
    $median = $values[intdiv(\count($values), 2)];

    return sprintf('%6.2f (%.2f .. %.2f)', $median, $values[0], $values[\count($values) - 1]);
};

$seq = $fib = $ratio = [];
for ($r = 0; $r < $rounds; $r++) {
    // Alternate which mode goes first so a slow phase of the machine is shared.
    if ($r % 2 === 0) {
        $s = $round(false);
        $f = $round(true);
    } else {
        $f = $round(true);
        $s = $round(false);
    }
    $seq[] = $s;
    $fib[] = $f;
    $ratio[] = $f / $s;
}
printf("hello worker, %d requests x %d rounds, pipeline %d; worker CPU us/request, median (min .. max):\n", $n, $rounds, $depth);
printf("  sequential   %s\n", $summary($seq));
printf("  Fiber mode   %s\n", $summary($fib));
printf("  fiber / seq  %s  (paired per round)\n", $summary($ratio));
