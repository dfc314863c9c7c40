<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fiber;

/**
 * @internal Which use of a Fiber is the current one: the pool advances a Fiber's epoch when
 * it has finished a job, before the Fiber parks or takes another.
 *
 * The loop records (Fiber, epoch) with each callback, so that an exception thrown by a
 * callback an earlier job left behind is not thrown into the next job the Fiber runs: with
 * the epoch moved on, that Fiber counts as ended for the callback.
 */
final class FiberEpoch
{
    /** @var \WeakMap<\Fiber, int>|null entries are kept for the Fiber's life: updating one is cheaper than adding it */
    private static ?\WeakMap $epochs = null;

    /**
     * Moves on with every epoch handed out by of(): a job during which it did not move can
     * have left no callback holding its epoch, so the pool need not advance that Fiber's.
     */
    public static int $issued = 0;

    public static function of(\Fiber $fiber): int
    {
        self::$issued++;

        return self::$epochs[$fiber] ?? 0;
    }

    public static function advance(\Fiber $fiber): void
    {
        self::$epochs ??= new \WeakMap();
        self::$epochs[$fiber] = (self::$epochs[$fiber] ?? 0) + 1;
    }
}
