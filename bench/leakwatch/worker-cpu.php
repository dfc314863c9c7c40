<?php

declare(strict_types=1);

/*
 * What the leak watch costs a worker, without the Go server or wrk in the measurement:
 * a real worker process over pipes, fed pipelined HTTP jobs, its CPU time read from
 * /proc/<pid>/schedstat (nanoseconds) around each batch. Watch off and on alternate, a
 * new process each, in a new order each round; prints the median CPU per request of each
 * and the per-round on/off ratios.
 *
 *   php bench/leakwatch/worker-cpu.php [worker.php] [rounds=8] [requests=50000] [paths=/]
 *
 * Default worker: examples/hello/worker.php. For the framework app, generate it first
 * (python3 bench/apps/framework/gen.py OUT) and pass OUT/worker.php and its paths, e.g.
 * "/,/catalog?page=2,/orders/17".
 *
 * FERRY_LEAK_WATCH_EVERY and FERRY_LEAK_WATCH_WARMUP set the watch's (250 and 10 by
 * default; a huge warm-up leaves only the per-request hook). LEAK_WATCH_AA=1 runs "on" with
 * the watch off too: an A/A run, whose spread is the machine's noise.
 */

$root = dirname(__DIR__, 2);
require $root . '/php/worker/autoload.php';
require $root . '/php/worker/tests/bootstrap.php';

use Ferry\Worker\Frame;
use Ferry\Worker\Tests\Support\WorkerProcess;

$script = $argv[1] ?? $root . '/examples/hello/worker.php';
$rounds = (int) ($argv[2] ?? 8);
$requests = (int) ($argv[3] ?? 50_000);
$paths = explode(',', $argv[4] ?? '/');
$every = getenv('FERRY_LEAK_WATCH_EVERY') ?: '250';
$depth = 16;

$contexts = [];
foreach ($paths as $uri) {
    $path = strtok($uri, '?');
    $query = (string) parse_url($uri, PHP_URL_QUERY);
    $contexts[] = serialize([
        'method' => 'GET', 'uri' => $uri, 'path' => $path, 'query' => $query, 'protocol' => 'HTTP/1.1',
        'remote_addr' => '127.0.0.1:50000', 'host' => 'localhost:8080',
        'headers' => ['Accept' => ['*/*'], 'Cookie' => ['theme=dark; sid=abc']], 'cookies' => ['theme' => 'dark', 'sid' => 'abc'],
    ]);
}

$cpu = static function (int $pid): int {
    return (int) explode(' ', (string) file_get_contents("/proc/$pid/schedstat"))[0];
};
$serve = static function (WorkerProcess $w, int $n, int $from) use ($contexts, $depth): void {
    for ($sent = 0; $sent < $n; $sent += $depth) {
        $batch = '';
        for ($i = 0; $i < $depth; $i++) {
            $id = $from + $sent + $i;
            $batch .= WorkerProcess::job($id, '', $contexts[$id % \count($contexts)]);
        }
        $w->send($batch);
        foreach ($w->readFrames($depth) as $frame) {
            if (($frame->flags & Frame::ERROR) !== 0) {
                throw new \RuntimeException('the worker failed a job: ' . $frame->payload);
            }
        }
    }
};
$measure = static function (bool $on) use ($script, $requests, $every, $serve, $cpu): float {
    $env = !$on ? [] : [
        'FERRY_LEAK_WATCH' => getenv('LEAK_WATCH_AA') ? '0' : '1',
        'FERRY_LEAK_WATCH_EVERY' => $every,
        'FERRY_LEAK_WATCH_WARMUP' => getenv('FERRY_LEAK_WATCH_WARMUP') ?: '10',
    ];
    $w = new WorkerProcess($script, $env);
    $w->handshake();
    $serve($w, 2_000, 0); // warm-up (and the leak watch's baseline)
    $before = $cpu($w->pid());
    $serve($w, $requests, 2_000);
    $used = $cpu($w->pid()) - $before;
    $w->sendStop();
    $w->wait();

    return $used / $requests / 1000;
};

printf("%s, %d requests per run, paths %s, leak watch every %s, %d rounds (machine load %s)\n",
    basename(dirname($script)) . '/' . basename($script), $requests, implode(' ', $paths), $every, $rounds,
    implode(' ', array_slice(explode(' ', (string) file_get_contents('/proc/loadavg')), 0, 3)));
$off = $on = $ratios = [];
for ($r = 0; $r < $rounds; $r++) {
    // Alternate which goes first, so a drift of the machine within a round hits both.
    if ($r % 2 === 0) {
        $a = $measure(false);
        $b = $measure(true);
    } else {
        $b = $measure(true);
        $a = $measure(false);
    }
    $off[] = $a;
    $on[] = $b;
    $ratios[] = $b / $a;
    printf("round %d: off %.2f us, on %.2f us per request, on/off %.3f\n", $r + 1, $a, $b, $b / $a);
}
$median = static function (array $v): float {
    sort($v);
    $n = \count($v);

    return $n % 2 ? $v[intdiv($n, 2)] : ($v[$n / 2 - 1] + $v[$n / 2]) / 2;
};
printf("worker CPU per request: off %.2f us, on %.2f us (medians); on/off median %.3f (%.3f .. %.3f)\n",
    $median($off), $median($on), $median($ratios), min($ratios), max($ratios));
