<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fiber;

use Ferry\Worker\Loop;
use Ferry\Worker\Worker;

/**
 * @internal pool.fiber_io (FERRY_FIBER_IO=1): ext/ferry's hooks on PHP's tcp and unix
 * streams and on sleep()/usleep() wait on this loop, so a job blocked on a socket suspends
 * only its own Fiber (docs/fibers.md lists what is hooked and where it falls back).
 *
 * Only the Fibers the worker runs jobs in (FiberPool's, ext/ferry's native ones) are
 * suspended: a Fiber the app made itself is resumed by the app, which would get the loop's
 * suspension instead of its own value, so there the hooks answer null and PHP blocks as it
 * always did.
 */
final class FiberIo
{
    /** @var \WeakMap<\Fiber, true>|null */
    private static ?\WeakMap $jobFibers = null;
    private static bool $warned = false;

    /** Files $fiber as one that runs jobs on the worker's loop. */
    public static function own(\Fiber $fiber): void
    {
        if (self::$jobFibers !== null) {
            self::$jobFibers[$fiber] = true;
        }
    }

    /**
     * Marks where a job starts and ends in $fiber: a hooked connection belongs to the job that
     * used it first until that job ends (ext/ferry's ferry_fiberio_owner.c), and another job
     * using it meanwhile gets an error instead of a share of its protocol.
     */
    public static function turn(\Fiber $fiber): void
    {
        if (self::$jobFibers !== null) {
            \Ferry\Ext\fiber_io_turn($fiber);
        }
    }

    /** Turns the hooks on when the pool asks for them; whether they are on. */
    public static function enable(object $loop): bool
    {
        if (getenv('FERRY_FIBER_IO') !== '1') {
            return false;
        }
        if (!\function_exists('Ferry\Ext\fiber_io_enable') || !$loop instanceof Loop) {
            if (!self::$warned) {
                self::$warned = true;
                Worker::log('pool.fiber_io needs ext/ferry and Ferry\Worker\Loop: blocking I/O blocks the whole worker');
            }

            return false;
        }
        self::$jobFibers ??= new \WeakMap();
        \Ferry\Ext\fiber_io_enable(
            static function ($stream, bool $write, ?float $timeout) use ($loop): ?bool {
                if (!self::inJob()) {
                    return null;
                }

                return $write ? $loop->awaitWritable($stream, $timeout) : $loop->awaitReadable($stream, $timeout);
            },
            static function (float $seconds) use ($loop): bool {
                if (!self::inJob()) {
                    return false;
                }
                $loop->wait($seconds);

                return true;
            },
        );

        return true;
    }

    public static function disable(): void
    {
        if (\function_exists('Ferry\Ext\fiber_io_disable')) {
            \Ferry\Ext\fiber_io_disable();
        }
        self::$jobFibers = null;
    }

    private static function inJob(): bool
    {
        $fiber = \Fiber::getCurrent();

        return $fiber !== null && isset(self::$jobFibers[$fiber]);
    }
}
