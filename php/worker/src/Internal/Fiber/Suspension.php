<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fiber;

use Ferry\Worker\Worker;

/**
 * @internal One wait of one Fiber, and the only way to end it (a resume token).
 *
 * Fiber mode reuses a Fiber for job after job, so a wake-up scheduled for an earlier wait (a
 * timer that was not cancelled, a watcher of an abandoned wait, a resolver that still holds
 * the Fiber) could otherwise land in whatever the Fiber waits for now, in another request.
 * A Suspension resumes its Fiber only while that very wait is in progress: once suspend()
 * has returned or thrown, resume() does nothing. Something resuming the Fiber behind its
 * back is ignored (and logged) and the Fiber goes on waiting.
 */
final class Suspension
{
    private bool $waiting = false;
    private bool $resumed = false;

    public function __construct(public readonly \Fiber $fiber)
    {
    }

    /** For the running Fiber; null outside any. */
    public static function create(): ?self
    {
        $fiber = \Fiber::getCurrent();

        return $fiber === null ? null : new self($fiber);
    }

    /**
     * Suspends the Fiber (which must be the running one) until resume(); returns its value.
     * An exception thrown into the Fiber ends the wait too, and the token with it.
     */
    public function suspend(): mixed
    {
        $this->waiting = true;
        try {
            while (true) {
                $value = \Fiber::suspend();
                if ($this->resumed) {
                    return $value;
                }
                Worker::log('a Fiber waiting on the event loop was resumed by something other than what it waits for; '
                    . 'ignored, it keeps waiting (resume Fibers only through Ferry\Worker\Loop or the client that suspended them)');
            }
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
