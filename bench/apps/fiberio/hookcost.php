<?php

declare(strict_types=1);

/*
 * What pool.fiber_io's hook costs per wait, apart from the batching many Fibers in flight
 * bring: ONE Fiber makes blocking SyncTarantool calls one after another (fio_wait), hooked
 * (the Fiber filed as a job Fiber, so each read waits on the loop) or plain (not filed: PHP's
 * own blocking read). Needs ext/ferry and a tarantool running bench/apps/fiberio/init.lua:
 *
 *   FIBERIO_TARANTOOL=tcp://127.0.0.1:3301 php -d extension=ext/ferry/.build/modules/ferry.so \
 *       bench/apps/fiberio/hookcost.php hooked|plain [calls] [wait]
 *
 * wait (seconds in Tarantool, default 0.001) makes every read find nothing yet, so each
 * call waits exactly once; under callgrind the difference of two runs (1000 and 3000 calls)
 * over 2000 is the instructions one call costs, without the process's boot.
 */

$root = dirname(__DIR__, 3);
require $root . '/php/worker/autoload.php';
require __DIR__ . '/SyncTarantool.php';

use Ferry\Worker\Internal\Fiber\FiberIo;
use Ferry\Worker\Loop;

$mode = $argv[1] ?? '';
if (!in_array($mode, ['hooked', 'plain'], true)) {
    fwrite(STDERR, "usage: hookcost.php hooked|plain [calls] [wait]\n");
    exit(2);
}
$n = (int) ($argv[2] ?? 20000);
$wait = (float) ($argv[3] ?? 0.001);
putenv('FERRY_FIBER_IO=1');
$loop = new Loop();
Loop::setDefault($loop);
if (!FiberIo::enable($loop)) {
    fwrite(STDERR, "fiber_io could not be enabled: is ext/ferry loaded?\n");
    exit(1);
}
$client = new SyncTarantool((string) (getenv('FIBERIO_TARANTOOL') ?: 'tcp://127.0.0.1:3301'));

$fiber = new Fiber(static function () use ($client, $n, $wait, $mode): void {
    $client->call('fio_wait', [0, 0]);
    $r0 = getrusage();
    $t0 = hrtime(true);
    for ($i = 0; $i < $n; $i++) {
        $client->call('fio_wait', [$wait, $i]);
    }
    $r1 = getrusage();
    $wall = (hrtime(true) - $t0) / 1e3 / $n;
    $us = static fn (string $k): float => (($r1["ru_$k.tv_sec"] - $r0["ru_$k.tv_sec"]) * 1e6
        + $r1["ru_$k.tv_usec"] - $r0["ru_$k.tv_usec"]) / $n;
    printf("%s: user %.1f us, kernel %.1f us, wall %.1f us per call (%d calls)\n",
        $mode, $us('utime'), $us('stime'), $wall, $n);
});
if ($mode === 'hooked') {
    FiberIo::own($fiber);
}
$fiber->start();
while (!$fiber->isTerminated()) {
    $loop->tick();
}
