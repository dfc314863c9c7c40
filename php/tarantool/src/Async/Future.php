<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/**
 * The eventual result of an operation. await() suspends the calling Fiber while the event loop
 * runs; outside a Fiber it blocks (through the Driver, or by running the loop until done).
 * Waiting Fibers are resumed directly by whoever completes the future, which saves a loop
 * round-trip per request compared to scheduling the resumption; each through the Suspension
 * of its own await(), so a Fiber that stopped waiting (an exception was thrown into it) is
 * not resumed in whatever it waits for next.
 */
class Future
{
    private const PENDING = 0;
    private const OK = 1;
    private const FAILED = 2;

    private int $state = self::PENDING;
    private mixed $value = null;
    private ?\Throwable $error = null;
    /** @var list<Suspension|\Closure> */
    private array $waiters = [];
    /** Applied to the value on resolve, so a mapped result needs no second future. */
    public ?\Closure $map = null;

    public function __construct(protected ?Driver $driver = null)
    {
    }

    public static function resolved(mixed $value): self
    {
        $f = new self();
        $f->resolve($value);
        return $f;
    }

    public static function failed(\Throwable $error): self
    {
        $f = new self();
        $f->reject($error);
        return $f;
    }

    /**
     * Awaits every future; keys are preserved. The first failure is thrown after all settled.
     * @param iterable<array-key, Future> $futures
     * @return array<array-key, mixed>
     */
    public static function all(iterable $futures): array
    {
        $out = [];
        $error = null;
        foreach ($futures as $k => $f) {
            try {
                $out[$k] = $f->await();
            } catch (\Throwable $e) {
                $error ??= $e;
            }
        }
        if ($error !== null) {
            throw $error;
        }
        return $out;
    }

    public function isPending(): bool
    {
        return $this->state === self::PENDING;
    }

    public function resolve(mixed $value): void
    {
        if ($this->state !== self::PENDING) {
            return;
        }
        if ($this->map !== null) {
            try {
                $value = ($this->map)($value);
            } catch (\Throwable $e) {
                $this->reject($e);
                return;
            }
        }
        $this->state = self::OK;
        $this->value = $value;
        if ($this->waiters !== []) {
            $this->wake();
        }
    }

    public function reject(\Throwable $error): void
    {
        if ($this->state !== self::PENDING) {
            return;
        }
        $this->state = self::FAILED;
        $this->error = $error;
        if ($this->waiters !== []) {
            $this->wake();
        }
    }

    public function await(): mixed
    {
        if ($this->state === self::PENDING) {
            $fiber = \Fiber::getCurrent();
            if ($fiber !== null && Loop::get()->isRunning()) {
                $suspension = new Suspension($fiber);
                $this->waiters[] = $suspension;
                try {
                    $suspension->suspend();
                } finally {
                    if ($this->state === self::PENDING) {
                        // The wait was cut short: nothing may resume it later.
                        $this->waiters = \array_values(\array_filter($this->waiters, static fn ($w) => $w !== $suspension));
                    }
                }
            } elseif ($this->driver !== null) {
                $this->driver->block($this);
            } else {
                $this->runLoopUntilDone();
            }
            if ($this->state === self::PENDING) {
                throw new \LogicException('Future still pending after its driver returned');
            }
        }
        if ($this->state === self::OK) {
            return $this->value;
        }
        throw $this->error;
    }

    /** @param \Closure(?\Throwable, mixed): void $callback called once settled (now, if already) */
    public function onComplete(\Closure $callback): void
    {
        if ($this->state === self::PENDING) {
            $this->waiters[] = $callback;
            return;
        }
        $callback($this->error, $this->value);
    }

    /** A future of $fn(value); failures pass through. */
    public function then(\Closure $fn): Future
    {
        $next = new Future($this->driver);
        $next->map = $fn;
        $this->onComplete(static function (?\Throwable $e, mixed $v) use ($next): void {
            $e === null ? $next->resolve($v) : $next->reject($e);
        });
        return $next;
    }

    private function runLoopUntilDone(): void
    {
        $loop = Loop::get();
        if ($loop->isRunning()) {
            throw new \LogicException('Cannot block on a future from an event loop callback; await it inside a Fiber (Scheduler::spawn)');
        }
        $this->waiters[] = static fn () => $loop->stop();
        $loop->run();
        if ($this->state === self::PENDING) {
            throw new \LogicException('Deadlock: the event loop ran out of work before the future completed');
        }
    }

    private function wake(): void
    {
        $waiters = $this->waiters;
        $this->waiters = [];
        foreach ($waiters as $w) {
            if ($w instanceof Suspension) {
                // A waiter that is no longer waiting (it was thrown out of await()) is skipped.
                try {
                    $w->resume();
                } catch (\Throwable $e) {
                    // Not ours to handle, and throwing here would abort the caller's dispatch loop.
                    Loop::get()->defer(static function () use ($e): never {
                        throw $e;
                    });
                }
            } else {
                $w($this->error, $this->value);
            }
        }
    }
}
