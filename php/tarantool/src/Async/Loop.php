<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/** Process-wide EventLoop used by connections and futures. */
final class Loop
{
    private static ?EventLoop $loop = null;

    public static function get(): EventLoop
    {
        return self::$loop ??= new StreamSelectLoop();
    }

    /** Installs another loop (e.g. php/worker's). Do it before any connection is used. */
    public static function set(EventLoop $loop): void
    {
        if (self::$loop !== null && self::$loop !== $loop && self::$loop->isRunning()) {
            throw new \LogicException('Cannot replace the event loop while it is running');
        }
        self::$loop = $loop;
    }
}
