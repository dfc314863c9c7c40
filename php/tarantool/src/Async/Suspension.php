<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/**
 * One wait of one Fiber, and the only way to end it (a resume token).
 *
 * A Fiber outlives its waits: after an exception thrown into it ends a wait (a timeout, a
 * cancellation), it goes on and waits for other things, and a Ferry worker in Fiber mode
 * even runs request after request in it. So whatever was to wake the old wait (a future
 * settling late, a timer, a stream watcher) must not resume the Fiber wherever it waits
 * now. A Suspension resumes its Fiber only while that very wait is in progress; a resume
 * from anywhere else finds it over and does nothing, and one that bypasses it (a bare
 * Fiber::resume()) is ignored: the Fiber keeps waiting.
 *
 * php/worker has the same class for its loop: this package does not depend on it.
 */
final class Suspension
{
    private bool $waiting = false;
    private bool $resumed = false;

    public function __construct(public readonly \Fiber $fiber)
    {
    }

    /** Suspends the Fiber (the running one) until resume(); returns the value it was given. */
    public function suspend(): mixed
    {
        $this->waiting = true;
        try {
            do {
                $value = \Fiber::suspend();
            } while (!$this->resumed);

            return $value;
        } finally {
            $this->waiting = false;
            $this->resumed = false;
        }
    }

    /** Ends the wait with $value; false (and nothing happens) when this wait is over. */
    public function resume(mixed $value = null): bool
    {
        if (!$this->waiting || $this->resumed || !$this->fiber->isSuspended()) {
            return false;
        }
        $this->resumed = true;
        $this->fiber->resume($value);

        return true;
    }
}
