<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Internal\Fiber\FiberIo;
use Ferry\Worker\Internal\Fiber\FiberPool;
use Ferry\Worker\Internal\Output\FiberCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Loop;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\RelayException;
use Ferry\Worker\Relay\StreamRelay;

/**
 * @internal ext/ferry's hot path for HttpWorker in Fiber mode (ext/ferry/ferry_fiber.c).
 *
 * Where FiberRunner would read the relay (idle, or its relay reader while jobs wait),
 * Ferry\Ext\fiber_serve() reads it and runs each usual request in a Fiber of its own pool (body: Ferry\Ext\fiber_body()), which
 * answers it in C when it never waited and its outcome is the usual one (what NativeLoop's
 * http_serve() answers, minus PHP's header state, which Fiber mode does not use). What it
 * cannot do comes here: a job that waits becomes one of FiberRunner's (promote()), and
 * any other outcome is finished by finish() as HttpWorker::handle() would. Any other frame
 * goes back to the PHP runner. FERRY_EXT_LOOP=0 keeps it off, as for sequential workers.
 *
 * Its Fibers are parked and trimmed as FiberPool's are; each keeps one placeholder Job,
 * filed under it in FiberCapture, that receives what a job echoes before it is known
 * whether the job needs a Job of its own.
 */
final class NativeFibers
{
    /** @var list<array{\Fiber, Job}> parked Fibers and their placeholders, most recently parked last */
    private array $parked = [];
    /** @var list<int> when (hrtime) each of $parked parked */
    private array $since = [];
    private int $created = 0;
    /**
     * @var array{\Fiber, Job}|null the Fiber fiber_serve() runs jobs in: held here too, so
     * that it outlives a fatal error in it for FatalAnswer (the session's map is weak)
     */
    private ?array $current = null;
    private readonly FiberCapture $capture;
    /** @var \WeakMap<Job, true> */
    private static ?\WeakMap $placeholders = null;
    /** FiberRunner's: a job joins its running ones, leaves them, or found the relay broken */
    private ?\Closure $join = null;
    private ?\Closure $leave = null;
    private ?\Closure $relayFailed = null;

    public static function available(WorkerSession $session): bool
    {
        $loop = $session->loop;

        return \function_exists('Ferry\Ext\fiber_serve') && getenv('FERRY_EXT_LOOP') !== '0' && $session->fibers
            && getenv('FERRY_FIBER_REUSE') !== '0' && ($loop === null || $loop instanceof Loop)
            && $session->relay instanceof StreamRelay && $session->capture instanceof FiberCapture
            && NativeContract::agreed();
    }

    /** Whether $job stands in for the job a native Fiber runs (FatalAnswer finds its id elsewhere). */
    public static function isPlaceholder(Job $job): bool
    {
        return isset(self::$placeholders[$job]);
    }

    /**
     * $handler is HttpWorker's application handler; $resume(Job, mixed $result, ?array $php,
     * ?\Throwable $error): Payload is HttpWorker::resume(), for the jobs finished in PHP.
     */
    public function __construct(
        private readonly WorkerSession $session,
        private readonly \Closure $handler,
        private readonly \Closure $resume,
        private readonly float $idleSeconds = FiberPool::IDLE_SECONDS,
    ) {
        $capture = $session->capture;
        \assert($capture instanceof FiberCapture);
        $this->capture = $capture;
    }

    /** @internal FiberRunner's bookkeeping, which promoted jobs join. */
    public function attach(\Closure $join, \Closure $leave, \Closure $relayFailed): void
    {
        $this->join = $join;
        $this->leave = $leave;
        $this->relayFailed = $relayFailed;
    }

    /**
     * Serves jobs, starting with the bytes in $read, until one needs the PHP runner; at
     * most $room jobs that wait. $once: the runner's loop found the relay readable while
     * jobs wait, so it reads once and returns rather than block.
     *
     * @return array{string, int} the bytes read and not served, and NativeLoop::READ_HERE, HANDED or CLOSED
     */
    public function serve(string $read, int $room, bool $once): array
    {
        $relay = $this->session->relay;
        \assert($relay instanceof StreamRelay);

        return \Ferry\Ext\fiber_serve($this, $this->session, $this->handler, $relay->readStream(), $relay->writeStream(), $read, $room, $once);
    }

    public function created(): int
    {
        return $this->created;
    }

    /**
     * Called by fiber_serve(): a parked Fiber, or a new one (fiber_serve() starts it).
     *
     * @return array{\Fiber, Job}
     */
    public function acquire(): array
    {
        while ($this->parked !== []) {
            array_pop($this->since);
            $pair = array_pop($this->parked);
            if ($pair[0]->isSuspended()) {
                return $this->current = $pair;
            }
        }
        $fiber = new \Fiber('Ferry\Ext\fiber_body');
        FiberIo::own($fiber);
        $placeholder = new Job(new Payload(), $this->capture);
        self::$placeholders ??= new \WeakMap();
        self::$placeholders[$placeholder] = true;
        $this->capture->adopt($fiber, $placeholder);
        $this->created++;

        return $this->current = [$fiber, $placeholder];
    }

    /** Called by fiber_serve() with the Fiber it kept: parked, or ended if enough are. */
    public function release(\Fiber $fiber, Job $placeholder): void
    {
        $this->current = null;
        if (!$this->park($fiber, $placeholder) && $fiber->isSuspended()) {
            $fiber->resume(null); // fiber_body() returns
        }
    }

    /** Frees Fibers parked longer than FiberPool::IDLE_SECONDS (every one with $all). */
    public function trim(bool $all = false): void
    {
        if ($this->parked === []) {
            return;
        }
        $cutoff = hrtime(true) - (int) ($this->idleSeconds * 1e9);
        while ($this->parked !== [] && ($all || $this->since[0] < $cutoff)) {
            array_shift($this->since);
            [$fiber] = array_shift($this->parked);
            if ($fiber->isSuspended()) {
                $fiber->resume(null);
            }
        }
    }

    /**
     * Called when the job in $fiber needs a Job of its own: it waits (by fiber_serve()), or
     * it is finished in PHP (by fiber_body(), before finish()). From here on it is one of
     * FiberRunner's running jobs, so that the runner sees it if it waits.
     */
    public function promote(\Fiber $fiber, Job $placeholder, int $id, string $context, string $body): Job
    {
        $job = $this->adopt($fiber, $placeholder, $id, $context, $body);
        $job->fiber = $fiber;
        ($this->join)($job);

        return $job;
    }

    /** Called by fiber_serve() when a job waits: its Fiber is FiberRunner's now. */
    public function waiting(): void
    {
        $this->current = null;
    }

    /**
     * Called by fiber_body() for a job it does not answer itself, as FiberRunner's job
     * runner does it. Returns whether the Fiber may take another job: null when the relay
     * broke, which the runner throws once fiber_serve() has returned.
     */
    public function finish(Job $job, \Fiber $fiber, Job $placeholder, mixed $result, ?\Throwable $error): ?bool
    {
        $broken = false;
        try {
            $this->session->complete($job, ($this->resume)($job, $result, null, $error));
        } catch (RelayException $e) {
            // Thrown here it could reach whatever resumed the Fiber (a loop callback): the
            // runner throws it once fiber_serve() has returned.
            ($this->relayFailed)($e);
            $job->failed = $broken = true;
        } finally {
            $this->capture->adopt($fiber, $placeholder);
            ($this->leave)($job);
        }

        return $broken ? null : !$job->failed;
    }

    /** Called by fiber_body() once a job that waited is done: false when enough Fibers are parked. */
    public function park(\Fiber $fiber, Job $placeholder): bool
    {
        if (\count($this->parked) >= $this->session->maxConcurrency) {
            return false;
        }
        $this->parked[] = [$fiber, $placeholder];
        $this->since[] = hrtime(true);

        return true;
    }

    /** A Job for the job $fiber runs, with what it echoed so far. */
    private function adopt(\Fiber $fiber, Job $placeholder, int $id, string $context, string $body): Job
    {
        $job = new Job(new Payload($body, $context, $id), $this->capture);
        $job->output = $placeholder->output;
        $job->flushed = $placeholder->flushed;
        $placeholder->output = '';
        $placeholder->flushed = 0;
        $this->capture->adopt($fiber, $job);

        return $job;
    }
}
