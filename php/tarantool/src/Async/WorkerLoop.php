<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/**
 * Drives Tarantool connections from php/worker's event loop, so a Ferry worker in Fiber
 * mode runs ONE loop (stream_select over the relay and every Tarantool socket): while a
 * job's Fiber waits for a reply, the worker reads new frames and runs other jobs.
 *
 *     \Ferry\Tarantool\Async\WorkerLoop::install();   // once, at worker start
 *     $row = $client->select('users', [$id]);         // inside a job: suspends only that job
 *
 * php/worker is not a dependency of this package: the loop is any object with the
 * Ferry\Worker\Loop methods (onReadable, onWritable, delay, defer, cancel, run, stop).
 */
final class WorkerLoop implements EventLoop
{
    private bool $running = false;

    public function __construct(private readonly object $loop)
    {
    }

    /** Installs an adapter over $loop (default: Ferry\Worker\Loop::get()) as the connector's loop. */
    public static function install(?object $loop = null): self
    {
        if ($loop === null) {
            if (!class_exists(\Ferry\Worker\Loop::class)) {
                throw new \LogicException('WorkerLoop::install() needs php/worker (Ferry\Worker\Loop) loaded');
            }
            $loop = \Ferry\Worker\Loop::get();
        }
        $adapter = new self($loop);
        Loop::set($adapter);

        return $adapter;
    }

    public function onReadable($stream, \Closure $callback): string
    {
        return (string) $this->loop->onReadable($stream, static fn ($s) => $callback($s));
    }

    public function onWritable($stream, \Closure $callback): string
    {
        return (string) $this->loop->onWritable($stream, static fn ($s) => $callback($s));
    }

    public function delay(float $seconds, \Closure $callback): string
    {
        return (string) $this->loop->delay($seconds, static fn () => $callback());
    }

    public function defer(\Closure $callback): void
    {
        $this->loop->defer($callback);
    }

    public function cancel(string $id): void
    {
        $this->loop->cancel((int) $id);
    }

    /** Used only outside Fibers (a classic, one-job-at-a-time worker awaiting a future). */
    public function run(): void
    {
        $this->running = true;
        try {
            $this->loop->run();
        } finally {
            $this->running = false;
        }
    }

    public function stop(): void
    {
        $this->loop->stop();
    }

    /**
     * In Fiber mode every job runs in a Fiber that the worker's loop resumes, so a Fiber
     * means "the loop is running": the connector suspends it instead of nesting a loop.
     */
    public function isRunning(): bool
    {
        return $this->running || \Fiber::getCurrent() !== null;
    }
}
