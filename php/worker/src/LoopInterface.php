<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * What the Fiber-mode runner needs from an event loop.
 *
 * Ferry\Worker\Loop implements it; another loop (for example one that also drives
 * database sockets) can be given to the Worker instead, as long as every Fiber that a
 * job suspends is resumed by that same loop, and only while the wait that suspended it is
 * in progress: the worker reuses its Fibers from job to job, so a late resume would land in
 * another request (Loop resumes through Internal\Fiber\Suspension tokens for this). Such a loop
 * should keep a callback's exception from escaping tick() (Loop throws it into the Fiber
 * that scheduled the callback): what escapes tick() ends the worker and every job in flight.
 */
interface LoopInterface
{
    /**
     * Calls $callback($stream, $id) each time $stream is readable, until cancel($id).
     *
     * @param resource $stream
     */
    public function onReadable($stream, callable $callback): int;

    public function cancel(int $id): void;

    /**
     * Runs one iteration: due callbacks, then waits (if $block) for I/O or the next timer.
     */
    public function tick(bool $block = true): void;

    /**
     * True while some watcher, timer or deferred callback could still wake a suspended
     * Fiber. The worker fails suspended jobs when nothing but its own relay reader is left.
     */
    public function hasPending(): bool;
}
