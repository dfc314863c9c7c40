<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/** Fiber helpers over the process EventLoop (see Loop). */
final class Scheduler
{
    /**
     * Runs $fn in a new Fiber, started on the next loop tick. The future carries its result or
     * exception; an exception never escapes into the loop.
     */
    public static function spawn(\Closure $fn, mixed ...$args): Future
    {
        $future = new Future();
        $fiber = new \Fiber(static function () use ($fn, $args, $future): void {
            try {
                $future->resolve($fn(...$args));
            } catch (\Throwable $e) {
                $future->reject($e);
            }
        });
        Loop::get()->defer(static fn () => $fiber->start());
        return $future;
    }

    /** Spawns $main and runs the loop until it returns; its result or exception is passed on. */
    public static function run(\Closure $main, mixed ...$args): mixed
    {
        return self::spawn($main, ...$args)->await();
    }

    /** Whether await() would suspend a Fiber rather than block the process. */
    public static function canSuspend(): bool
    {
        return \Fiber::getCurrent() !== null && Loop::get()->isRunning();
    }

    /** Pauses the current Fiber (or the process, outside one) for $seconds. */
    public static function sleep(float $seconds): void
    {
        if (!self::canSuspend()) {
            \usleep((int) \max(0, $seconds * 1e6));
            return;
        }
        $loop = Loop::get();
        $suspension = new Suspension(\Fiber::getCurrent());
        $timer = $loop->delay($seconds, static fn () => $suspension->resume());
        try {
            $suspension->suspend();
        } finally {
            // Woken another way (an exception thrown in): the timer must not wake it later.
            $loop->cancel($timer);
        }
    }

    /**
     * Suspends the current Fiber until $stream is readable; false on timeout. Outside a Fiber
     * (or with no loop running) it waits in stream_select().
     * @param resource $stream
     */
    public static function awaitReadable($stream, ?float $timeout = null): bool
    {
        return self::awaitStream($stream, $timeout, false);
    }

    /** @param resource $stream */
    public static function awaitWritable($stream, ?float $timeout = null): bool
    {
        return self::awaitStream($stream, $timeout, true);
    }

    /** @param resource $stream */
    private static function awaitStream($stream, ?float $timeout, bool $write): bool
    {
        if (!self::canSuspend()) {
            $r = $write ? [] : [$stream];
            $w = $write ? [$stream] : [];
            $e = null;
            $sec = $timeout === null ? null : (int) $timeout;
            $usec = $timeout === null ? null : (int) (($timeout - (int) $timeout) * 1e6);
            return (int) @\stream_select($r, $w, $e, $sec, $usec) > 0;
        }
        $loop = Loop::get();
        $suspension = new Suspension(\Fiber::getCurrent());
        $watch = $timer = null;
        $wake = static function (bool $ready) use ($loop, $suspension, &$watch, &$timer): void {
            $loop->cancel($watch);
            if ($timer !== null) {
                $loop->cancel($timer);
            }
            $suspension->resume($ready);
        };
        $watch = $write
            ? $loop->onWritable($stream, static fn () => $wake(true))
            : $loop->onReadable($stream, static fn () => $wake(true));
        if ($timeout !== null) {
            $timer = $loop->delay($timeout, static fn () => $wake(false));
        }
        try {
            return $suspension->suspend();
        } finally {
            // Woken another way (an exception thrown in): neither may wake it later.
            $loop->cancel($watch);
            if ($timer !== null) {
                $loop->cancel($timer);
            }
        }
    }
}
