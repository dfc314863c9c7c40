<?php
// A worker built on the real SDK in Fiber mode (FERRY_FIBERS=1): jobs that wait
// on the loop overlap. "sleep:<ms>" waits then answers; "probe:<ms>" answers the
// highest number of jobs seen running at once; "hold:<file>" answers once <file>
// exists; "block:<file>" does the same without suspending (the worker is busy, as on
// CPU work); "crash" exits; "pid" answers the pid.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Job;
use Ferry\Worker\Loop;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

$active = 0;
$peak = 0;
Worker::create()->run(static function (Payload $p, Job $job) use (&$active, &$peak): Payload {
    [$cmd, $arg] = explode(':', $p->body . ':', 3);
    $active++;
    $peak = max($peak, $active);
    try {
        switch ($cmd) {
            case 'crash':
                exit(3);
            case 'pid':
                return new Payload((string) getmypid(), 'ctx');
            case 'sleep':
                Loop::sleep((int) $arg / 1000);
                return new Payload("slept $arg", 'ctx');
            case 'hold':
                while (!file_exists($arg)) {
                    Loop::sleep(0.002);
                    clearstatcache();
                }
                return new Payload('released', 'ctx');
            case 'block':
                while (!file_exists($arg)) {
                    usleep(2000);
                    clearstatcache();
                }
                return new Payload('unblocked', 'ctx');
            case 'probe':
                Loop::sleep((int) $arg / 1000);
                return new Payload((string) $peak, 'ctx');
        }
        return new Payload($arg, 'ctx');
    } finally {
        $active--;
    }
});
