<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;

/** Drives an operation over a share of the revolutions: sequentially, or from N Fibers. */
final class Runner
{
    /**
     * Revolutions $first, $first + $step, ... below $end, issued one after another.
     * @param \Closure(Client, int): void $op
     */
    public static function sync(Client $c, \Closure $op, int $first, int $end, int $step = 1): float
    {
        $t = \hrtime(true);
        for ($seq = $first; $seq < $end; $seq += $step) {
            $op($c, $seq);
        }
        return (\hrtime(true) - $t) / 1e9;
    }

    /**
     * $n selects by random key in a plain loop, shaped like Baseline::selects() (no closure
     * call per request), for the client-vs-hand-written-loop comparison.
     */
    public static function syncSelects(Client $c, int $n): float
    {
        $space = Server::SPACE_ID;
        $t = \hrtime(true);
        for ($i = 0; $i < $n; $i++) {
            $rows = $c->select($space, [\mt_rand(1, Server::TUPLES)]);
        }
        $elapsed = (\hrtime(true) - $t) / 1e9;
        if (\count($rows) !== 1) {
            throw new \RuntimeException('client: unexpected reply');
        }
        return $elapsed;
    }

    /**
     * The same share spread over $fibers Fibers using the synchronous-looking API, all on one
     * connection and one event loop.
     * @param \Closure(Client, int): void $op
     */
    public static function fibers(Client $c, \Closure $op, int $fibers, int $first, int $end, int $step = 1): float
    {
        $t = \hrtime(true);
        for ($f = 0; $f < $fibers; $f++) {
            $start = $first + $f * $step;
            $stride = $fibers * $step;
            Scheduler::spawn(static function () use ($c, $op, $start, $end, $stride): void {
                for ($seq = $start; $seq < $end; $seq += $stride) {
                    $op($c, $seq);
                }
            });
        }
        Loop::get()->run();
        return (\hrtime(true) - $t) / 1e9;
    }
}
