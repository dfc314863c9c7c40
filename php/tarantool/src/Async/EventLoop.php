<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/**
 * The one event loop a process runs. The connector only needs these primitives, so any loop
 * (php/worker's, or an adapter over Revolt/ReactPHP) can drive Tarantool connections side by
 * side with its own streams: implement this interface and install it with Loop::set().
 *
 * Contract:
 * - callbacks are invoked from the loop's own (non-Fiber) context, never re-entrantly;
 * - run() returns when stop() is called or when nothing is watched, delayed or deferred;
 * - an exception thrown by a callback propagates out of run().
 */
interface EventLoop
{
    /**
     * Calls $callback($stream) every time $stream is readable, until cancel($id).
     * @param resource $stream
     */
    public function onReadable($stream, \Closure $callback): string;

    /**
     * Calls $callback($stream) every time $stream is writable, until cancel($id).
     * @param resource $stream
     */
    public function onWritable($stream, \Closure $callback): string;

    /** Calls $callback() once, $seconds from now. */
    public function delay(float $seconds, \Closure $callback): string;

    /** Calls $callback() once, on the next tick, before waiting for I/O. */
    public function defer(\Closure $callback): void;

    /** Forgets a watcher or timer; unknown ids are ignored. */
    public function cancel(string $id): void;

    public function run(): void;

    public function stop(): void;

    public function isRunning(): bool;
}
