<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Exception\ConnectionException;

/**
 * What a connection does in a process forked after it connected (pcntl_fork(), Ferry's
 * pool.boot: fork). Parent and child then hold the same socket: if both used it, their
 * requests would interleave in one IPROTO stream, each could read replies meant for the
 * other, and their sync counters, copied at the fork, would clash. So the session stays
 * with the process that opened it; any other process lets go of its copy on first use
 * and connects anew.
 *
 * @internal used by Connection only; shares its state
 */
trait Forking
{
    /** The process the current session (socket, requests in flight, buffers) belongs to. */
    private int $owner = 0;

    /** Called at every entry point; costs one getpid() when nothing forked. */
    private function ownSession(): void
    {
        if ($this->owner !== \getmypid()) {
            $this->leaveInheritedSession();
        }
    }

    /**
     * Forgets the parent's session without a byte written to it or a shutdown() (both act on
     * the socket the parent still uses); the next request connects anew, as after a failure.
     */
    private function leaveInheritedSession(): void
    {
        $parent = $this->owner;
        $this->owner = \getmypid();
        $socket = $this->socket;
        $pending = $this->pending;
        // Watchers and timers are cancelled in this process's copy of the loop only.
        $this->unwatch();
        $this->socket = null;
        $this->connecting = null;
        $this->pending = [];
        // Bytes read but not yet framed, and frames queued but not yet written, are the
        // parent's: it reads and writes them itself.
        $this->rbuf = $this->wbuf = '';
        $this->queued = $this->written = 0;
        $socket?->release();
        if ($pending === []) {
            return;
        }
        // The parent gets these replies; here they could only hang or be stolen from it.
        $e = new ConnectionException(\sprintf(
            'Request to %s was sent by process %d before it forked this one (%d); its reply goes to that process',
            $this->options->display,
            $parent,
            $this->owner,
        ), $this->options->display, true);
        foreach ($pending as $p) {
            $p->reject($e);
        }
    }
}
