<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\Fiber\FiberEpoch;
use Ferry\Worker\Internal\Fiber\Suspension;

/**
 * A small stream_select() event loop with timers, built for Fibers.
 *
 * Code running inside a Fiber calls Loop::sleep(), awaitReadable() or awaitWritable():
 * the Fiber is suspended and the loop resumes it when the timer fires or the stream is
 * ready. Called outside a Fiber, the same methods run the loop until the condition holds,
 * so library code works in both worlds.
 *
 * A callback that throws does not end the loop. Each callback remembers the Fiber that
 * registered it (or that registered the callback it was registered from): by default the
 * exception is thrown into that Fiber if it is suspended, so in a worker only the job that
 * scheduled the callback fails; otherwise it is logged. setErrorHandler() replaces this.
 *
 * A worker reuses its Fibers from job to job, so a callback also remembers the Fiber's epoch
 * (Internal\Fiber\FiberEpoch): once the job that registered it has ended, the Fiber counts as
 * ended for the callback. Waits resume their Fiber through an Internal\Fiber\Suspension, which a
 * wake-up arriving after the wait ended cannot use.
 */
final class Loop implements LoopInterface
{
    private static ?self $default = null;

    /** @var array<int, array{resource, \Closure, ?\Fiber, int}> stream, callback, owner, owner's epoch */
    private array $readers = [];
    /** @var array<int, array{resource, \Closure, ?\Fiber, int}> */
    private array $writers = [];
    /** @var array<int, array{float, \Closure, ?\Fiber, int}> */
    private array $timers = [];
    /** @var \SplMinHeap<array{float, int}> due time and id; cancelled ids are skipped lazily */
    private \SplMinHeap $queue;
    /** @var list<array{\Closure, ?\Fiber, int}> */
    private array $deferred = [];
    private int $nextId = 1;
    private bool $stopped = false;
    /** owner of the callback running now, and its epoch, inherited by what it registers */
    private ?\Fiber $running = null;
    private int $runningEpoch = 0;
    private ?\Closure $errorHandler = null;

    public function __construct()
    {
        $this->queue = new \SplMinHeap();
    }

    /**
     * The process-wide loop: the Worker uses it in Fiber mode unless given another one.
     */
    public static function get(): self
    {
        return self::$default ??= new self();
    }

    public static function setDefault(?self $loop): void
    {
        self::$default = $loop;
    }

    /**
     * Suspends the current Fiber for $seconds (or runs the default loop that long outside one).
     */
    public static function sleep(float $seconds): void
    {
        self::get()->wait($seconds);
    }

    /**
     * Sets what handles an exception thrown by a callback: $handler(\Throwable $e, ?\Fiber $owner),
     * $owner being the Fiber that scheduled the callback, or null when there is none or it has
     * moved on (ended, or serves another job). What the handler throws gets the default
     * treatment; null restores the default.
     *
     * @param (\Closure(\Throwable, ?\Fiber): void)|null $handler
     */
    public function setErrorHandler(?\Closure $handler): void
    {
        $this->errorHandler = $handler;
    }

    public function onReadable($stream, callable $callback): int
    {
        $id = $this->nextId++;
        [$owner, $epoch] = $this->owner();
        $this->readers[$id] = [$stream, $callback(...), $owner, $epoch];

        return $id;
    }

    /**
     * @param resource $stream
     */
    public function onWritable($stream, callable $callback): int
    {
        $id = $this->nextId++;
        [$owner, $epoch] = $this->owner();
        $this->writers[$id] = [$stream, $callback(...), $owner, $epoch];

        return $id;
    }

    /**
     * Calls $callback($id) once after $seconds.
     */
    public function delay(float $seconds, callable $callback): int
    {
        $id = $this->nextId++;
        $due = hrtime(true) / 1e9 + max(0.0, $seconds);
        [$owner, $epoch] = $this->owner();
        $this->timers[$id] = [$due, $callback(...), $owner, $epoch];
        $this->queue->insert([$due, $id]);

        return $id;
    }

    /**
     * Runs $callback at the start of the next tick.
     */
    public function defer(callable $callback): void
    {
        [$owner, $epoch] = $this->owner();
        $this->deferred[] = [$callback(...), $owner, $epoch];
    }

    public function cancel(int $id): void
    {
        unset($this->readers[$id], $this->writers[$id], $this->timers[$id]);
    }

    public function hasPending(): bool
    {
        return $this->readers !== [] || $this->writers !== [] || $this->timers !== [] || $this->deferred !== [];
    }

    /**
     * Runs until nothing is left to wait for, or stop() is called.
     */
    public function run(): void
    {
        $this->stopped = false;
        while (!$this->stopped && $this->hasPending()) {
            $this->tick();
        }
    }

    public function stop(): void
    {
        $this->stopped = true;
    }

    public function tick(bool $block = true): void
    {
        if ($this->deferred !== []) {
            $deferred = $this->deferred;
            $this->deferred = [];
            foreach ($deferred as [$callback, $owner, $epoch]) {
                $this->invoke($callback, $owner, $epoch);
            }
        }

        $timeout = null;
        if (!$block || $this->deferred !== []) {
            $timeout = 0.0;
        } elseif (($due = $this->nextDue()) !== null) {
            $timeout = max(0.0, $due - hrtime(true) / 1e9);
        }

        if ($this->readers !== [] || $this->writers !== []) {
            $this->select($timeout);
        } elseif ($timeout !== null && $timeout > 0) {
            usleep((int) ceil($timeout * 1e6));
        }

        $this->runTimers();
    }

    /**
     * Suspends the current Fiber for $seconds; outside a Fiber, runs this loop meanwhile.
     */
    public function wait(float $seconds): void
    {
        $fiber = \Fiber::getCurrent();
        if ($fiber === null) {
            $done = false;
            $this->delay($seconds, static function () use (&$done): void {
                $done = true;
            });
            while (!$done) {
                $this->tick();
            }

            return;
        }
        $suspension = new Suspension($fiber);
        $id = $this->delay($seconds, static fn () => $suspension->resume());
        try {
            $suspension->suspend();
        } finally {
            // Resumed another way (an exception thrown in): the timer must not wake it later.
            $this->cancel($id);
        }
    }

    /**
     * Waits until $stream is readable; false if $timeout seconds passed first.
     *
     * @param resource $stream
     */
    public function awaitReadable($stream, ?float $timeout = null): bool
    {
        return $this->await(true, $stream, $timeout);
    }

    /**
     * @param resource $stream
     */
    public function awaitWritable($stream, ?float $timeout = null): bool
    {
        return $this->await(false, $stream, $timeout);
    }

    /**
     * @param resource $stream
     */
    private function await(bool $read, $stream, ?float $timeout): bool
    {
        $suspension = Suspension::create();
        $result = null;
        $timerId = null;
        $settle = function (bool $ready) use (&$result, &$watchId, &$timerId, $suspension): void {
            $this->cancel($watchId);
            if ($timerId !== null) {
                $this->cancel($timerId);
            }
            $result = $ready;
            $suspension?->resume($ready);
        };
        $watchId = $read
            ? $this->onReadable($stream, static fn () => $settle(true))
            : $this->onWritable($stream, static fn () => $settle(true));
        if ($timeout !== null) {
            $timerId = $this->delay($timeout, static fn () => $settle(false));
        }
        if ($suspension !== null) {
            try {
                return (bool) $suspension->suspend();
            } finally {
                $this->cancel($watchId);
                if ($timerId !== null) {
                    $this->cancel($timerId);
                }
            }
        }
        while ($result === null) {
            $this->tick();
        }

        return $result;
    }

    private function select(?float $timeout): void
    {
        $read = [];
        foreach ($this->readers as $id => [$stream]) {
            $read[$id] = $stream;
        }
        $write = [];
        foreach ($this->writers as $id => [$stream]) {
            $write[$id] = $stream;
        }
        $except = null;
        $seconds = $timeout === null ? null : (int) $timeout;
        $micro = $timeout === null ? null : (int) (($timeout - (int) $timeout) * 1e6);
        // false means a signal interrupted the wait; timers and the next tick handle the rest.
        if (@stream_select($read, $write, $except, $seconds, $micro) === false) {
            return;
        }
        foreach ($read as $id => $stream) {
            if (isset($this->readers[$id])) {
                $this->invoke($this->readers[$id][1], $this->readers[$id][2], $this->readers[$id][3], $stream, $id);
            }
        }
        foreach ($write as $id => $stream) {
            if (isset($this->writers[$id])) {
                $this->invoke($this->writers[$id][1], $this->writers[$id][2], $this->writers[$id][3], $stream, $id);
            }
        }
    }

    private function nextDue(): ?float
    {
        while (!$this->queue->isEmpty()) {
            [$due, $id] = $this->queue->top();
            if (isset($this->timers[$id])) {
                return $due;
            }
            $this->queue->extract();
        }

        return null;
    }

    private function runTimers(): void
    {
        $now = hrtime(true) / 1e9;
        while (($due = $this->nextDue()) !== null && $due <= $now) {
            [, $id] = $this->queue->extract();
            [, $callback, $owner, $epoch] = $this->timers[$id];
            unset($this->timers[$id]);
            $this->invoke($callback, $owner, $epoch, $id);
        }
    }

    /**
     * The Fiber that registers a callback now, else the owner of the callback doing it.
     *
     * @return array{?\Fiber, int}
     */
    private function owner(): array
    {
        $fiber = \Fiber::getCurrent();

        return $fiber === null ? [$this->running, $this->runningEpoch] : [$fiber, FiberEpoch::of($fiber)];
    }

    private function invoke(\Closure $callback, ?\Fiber $owner, int $epoch, mixed ...$args): void
    {
        $outer = $this->running;
        $outerEpoch = $this->runningEpoch;
        $this->running = $owner;
        $this->runningEpoch = $epoch;
        try {
            $callback(...$args);
        } catch (\Throwable $e) {
            $this->fail($e, $owner !== null && FiberEpoch::of($owner) === $epoch ? $owner : null);
        } finally {
            $this->running = $outer;
            $this->runningEpoch = $outerEpoch;
        }
    }

    /**
     * @param ?\Fiber $owner null also when the job that registered the callback has ended: its
     *                       Fiber may be serving another job, which must not get the exception
     */
    private function fail(\Throwable $e, ?\Fiber $owner): void
    {
        if ($this->errorHandler !== null) {
            try {
                ($this->errorHandler)($e, $owner);

                return;
            } catch (\Throwable $rethrown) {
                $e = $rethrown;
            }
        }
        if ($owner !== null && $owner === \Fiber::getCurrent()) {
            throw $e; // the owner ticked the loop itself: the exception is its own to handle
        }
        if ($owner !== null && $owner->isSuspended()) {
            try {
                $owner->throw($e);

                return;
            } catch (\Throwable $unhandled) {
                $e = $unhandled; // the owner is not a worker job and did not catch it
            }
        }
        Worker::log(sprintf("event loop callback failed: %s\n%s", Worker::describe($e), $e->getTraceAsString()));
    }
}
