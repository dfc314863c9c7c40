<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * @internal Direct mode in Fiber mode (docs/direct.md): ext/ferry's event loop
 * (ext/ferry/ferry_direct_fiber.c) run a step at a time by FiberRunner, so that the
 * requests of all this worker's connections run as Fibers on its loop, beside the relay's
 * jobs. Its epoll set is one more readable stream on the loop (events()); poll() returns
 * the whole requests read since, each a job for a Fiber. Their answers reach their clients
 * by job id through the session's $directSink, and done() lets a connection go on with
 * its next request once its job has ended.
 */
final class DirectFibers
{
    /** the top bit of a direct request's job id, which the relay's never have */
    private const ID = 0x80000000;
    private const DRAINED = 1;
    private const SERVED = 2;

    /** @var resource */
    private $events;
    private bool $drained = false;
    /** pool.fiber_io: a request whose client left is cancelled, as the server does in front mode */
    private readonly bool $cancelGone;

    public static function available(): bool
    {
        return \function_exists('Ferry\Ext\direct_poll');
    }

    public function __construct(private readonly WorkerSession $session)
    {
        $limits = json_decode((string) getenv('FERRY_DIRECT_LIMITS'), true);
        $limits = (\is_array($limits) ? array_filter($limits, static fn ($v): bool => \is_int($v) || \is_array($v)) : [])
            + ['stats' => (string) getenv('FERRY_DIRECT_STATS')];
        $epoll = \Ferry\Ext\direct_poll_fd((int) getenv('FERRY_DIRECT_FD'), $limits);
        $events = fopen("php://fd/$epoll", 'r');
        if ($events === false) {
            throw new \RuntimeException("direct mode: cannot watch the event loop's descriptor $epoll");
        }
        $this->events = $events;
        $this->cancelGone = getenv('FERRY_FIBER_IO') === '1';
        // Every answer goes through here: frames of several jobs, direct or relayed, mixed.
        $session->directSink = static function (string $bytes) use ($session): void {
            $control = '';
            foreach (\Ferry\Ext\direct_answer_to($bytes, $control) as $id) {
                if (isset($session->streams[$id])) {
                    // The client left: a streamed answer stops at its next part, as on a STOP.
                    $session->streams[$id] = true;
                }
            }
            if ($control !== '' && !$session->closed) {
                $session->relay->write($control);
            }
        };
    }

    /** Whether job $id is a request of a direct connection (rather than a relay job). */
    public static function owns(int $id): bool
    {
        return $id >= self::ID;
    }

    /** @return resource readable when poll() has something to do */
    public function events()
    {
        return $this->events;
    }

    /**
     * The requests read whole since the last call, as payloads for Fibers: about $room of
     * them at most (C leaves the rest unread). While stopping, it drains: it takes what is
     * queued to this worker, accepts no more, and closes idle connections.
     *
     * @return list<Payload>
     */
    public function poll(int $room): array
    {
        $session = $this->session;
        $polled = \Ferry\Ext\direct_poll($session->isStopping(), max(0, $room));
        [$jobs, $flags] = $polled;
        if ($this->cancelGone) {
            // Running requests whose client left: FiberRunner ends them where they wait.
            foreach ($polled[2] ?? [] as $id) {
                $session->cancelled[$id] = 'client';
            }
        }
        $this->drained = ($flags & self::DRAINED) !== 0;
        if (($flags & self::SERVED) !== 0) {
            Worker::log('served pool.max_jobs requests: asking to be retired');
            $session->stop();
            $session->flush();
        }
        $payloads = [];
        foreach ($jobs as [$id, $context, $body]) {
            $payloads[] = new Payload($body, $context, $id);
        }

        return $payloads;
    }

    /** Stopping, and every connection is closed. */
    public function drained(): bool
    {
        return $this->drained;
    }

    /** Job $id has ended (its answer written, its terminate hooks run). */
    public function done(int $id): void
    {
        \Ferry\Ext\direct_done($id);
    }
}
