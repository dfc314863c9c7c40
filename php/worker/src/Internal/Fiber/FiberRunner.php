<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fiber;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\JobFrames;
use Ferry\Worker\Internal\Native\DirectFibers;
use Ferry\Worker\Internal\Native\NativeFibers;
use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\JobCancelled;
use Ferry\Worker\LoopInterface;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\RelayException;
use Ferry\Worker\Worker;

/**
 * @internal Fiber mode: every job runs in a Fiber of its own on one event loop.
 *
 * The relay is just another readable stream on the loop, so while a job Fiber waits
 * (Loop::sleep, awaitReadable, an async client on the same loop) new frames are read and
 * other jobs start. Each job's Fiber writes its answer as soon as the job is done, in any
 * order, then runs its terminate hooks; then its slot is free and the Fiber goes back to the
 * pool (FiberPool) for a later job.
 *
 * In direct mode ($direct) the worker's HTTP connections are on the loop too: ext/ferry's
 * epoll set is a readable stream, and each whole request it reads becomes a job like a
 * relayed one (DirectFibers).
 */
final class FiberRunner
{
    /** @var array<int, Job> running jobs by object id */
    private array $active = [];
    private ?int $readerId = null;
    private ?\Closure $reader = null;
    /** what reading or writing the relay threw: the stream is unusable, so the worker must end */
    private ?\Throwable $relayFailure = null;
    private ?int $directId = null;
    /** direct requests ended so far */
    private int $directEnded = 0;
    /** @var list<Payload> direct requests read while every slot was taken */
    private array $directQueue = [];

    public function __construct(
        private readonly WorkerSession $session,
        private readonly LoopInterface $loop,
        private readonly ?NativeFibers $native = null,
        private readonly ?DirectFibers $direct = null,
    ) {
        $native?->attach(
            function (Job $job): void {
                $this->active[spl_object_id($job)] = $job;
            },
            function (Job $job): void {
                unset($this->active[spl_object_id($job)]); // ext/ferry turned its epoch (FiberIo::turn()) already
                $job->fiber = null;
            },
            function (\Throwable $e): void {
                $this->relayFailure ??= $e;
            },
        );
    }

    public function run(callable $handler): void
    {
        // pool.fiber_reuse: false keeps none parked, so each job gets a new Fiber, for apps
        // that key request state by Fiber::getCurrent().
        $keep = getenv('FERRY_FIBER_REUSE') === '0' ? 0 : $this->session->maxConcurrency;
        $pool = new FiberPool($keep, $this->jobRunner($handler, $this->session->capture));
        $hooked = FiberIo::enable($this->loop);
        try {
            while (true) {
                $this->startQueued($pool);
                $this->startDirect($pool);
                $this->rethrowRelayFailure();
                $this->session->flush();
                $idle = $this->active === [] && !$this->session->hasQueuedJobs() && $this->directQueue === [];
                if ($this->session->isStopping()) {
                    if ($idle && ($this->direct === null || $this->direct->drained())) {
                        return;
                    }
                } elseif ($idle && $this->direct === null && $this->nothingElseToWaitFor()) {
                    // Only the relay can bring work: read it the way a sequential worker
                    // does, without a select() first.
                    $pool->trim();
                    $this->native?->trim();
                    // ext/ferry runs the usual jobs from here until one needs this loop.
                    if ($this->native === null || !$this->serveNative($this->session->maxConcurrency, false)) {
                        $this->session->receive();
                    }
                    continue;
                }
                $this->watchRelay(!$this->session->isStopping() && !$this->session->hasQueuedJobs());
                $this->watchDirect($this->direct !== null && $this->directRoom() > 0);
                if ($this->active !== [] && !$this->canResume()) {
                    $this->failStuckJobs();
                    continue;
                }
                if ($this->active !== [] && $this->session->jobsSinceWaiting) {
                    // The server holds new jobs while we run what it sent: every job we
                    // have is suspended now, so they may come.
                    $this->session->jobsSinceWaiting = false;
                    $this->session->queue(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"waiting":true}'));
                    $this->session->flush();
                }
                if ($this->session->cancelled !== []) {
                    // Before the loop may block: a direct poll above can have brought them.
                    $this->cancelJobs();
                }
                $pool->trim();
                $this->native?->trim();
                $this->loop->tick();
                $this->rethrowRelayFailure();
            }
        } finally {
            $this->watchRelay(false);
            $this->watchDirect(false);
            $pool->trim(all: true);
            $this->native?->trim(all: true);
            if ($hooked) {
                FiberIo::disable();
            }
        }
    }

    /** Free slots for direct requests (the relay's jobs take theirs first). */
    private function directRoom(): int
    {
        return $this->session->maxConcurrency - \count($this->active) - \count($this->directQueue);
    }

    /**
     * Starts the direct requests read whole since the last look, as many as the slots
     * allow; the rest wait here (at most one per connection, whose next one C holds back).
     */
    private function startDirect(FiberPool $pool): void
    {
        if ($this->direct === null) {
            return;
        }
        $capture = $this->session->capture;
        do {
            // A job that never waits ends inside start(), its connection's next request read
            // by the next poll, which nothing on the loop would wake us for.
            $ended = $this->directEnded;
            // Polled even with no room: answered connections are settled (written, expired, closed).
            foreach ($this->direct->poll($this->directRoom()) as $payload) {
                $this->directQueue[] = $payload;
            }
            while ($this->directQueue !== [] && \count($this->active) < $this->session->maxConcurrency) {
                $job = new Job(array_shift($this->directQueue), $capture);
                $this->active[spl_object_id($job)] = $job;
                $pool->start($job);
            }
        } while ($ended !== $this->directEnded);
    }

    /** Wakes the loop for the direct connections while a slot is free to run what they send. */
    private function watchDirect(bool $want): void
    {
        if ($want && $this->directId === null) {
            \assert($this->direct !== null);
            // Nothing to do here: the runner polls after every tick.
            $this->directId = $this->loop->onReadable($this->direct->events(), static function (): void {
            });
        } elseif (!$want && $this->directId !== null) {
            $this->loop->cancel($this->directId);
            $this->directId = null;
        }
    }

    /** A job has left its slot: a direct connection may go on with its next request. */
    private function ended(Job $job): void
    {
        unset($this->active[spl_object_id($job)]);
        $job->fiber !== null && FiberIo::turn($job->fiber);
        $job->fiber = null;
        if ($this->direct !== null && DirectFibers::owns($job->payload->id)) {
            $this->directEnded++;
            $this->direct->done($job->payload->id);
        }
    }

    private function startQueued(FiberPool $pool): void
    {
        $capture = $this->session->capture;
        while (\count($this->active) < $this->session->maxConcurrency && ($frame = $this->session->nextJob()) !== null) {
            $job = JobFrames::job($frame, $capture);
            if (\is_string($job)) {
                $this->session->queue($job);
                continue;
            }
            $this->active[spl_object_id($job)] = $job;
            $pool->start($job);
        }
    }

    /**
     * What each pooled Fiber runs per job. Returns whether the Fiber may take another job:
     * not after a failure, which may have cut a wait short or left state half-changed.
     *
     * @return \Closure(Job): bool
     */
    private function jobRunner(callable $handler, OutputCapture $capture): \Closure
    {
        $session = $this->session;

        return function (Job $job) use ($session, $handler, $capture): bool {
            FiberIo::turn(\Fiber::getCurrent());
            try {
                $session->finish($job, $session->execute($job, $handler, $capture));

                return !$job->failed;
            } catch (RelayException $e) {
                // Thrown here it would reach whatever resumed the Fiber (often a loop callback).
                $this->relayFailure ??= $e;

                return false;
            } finally {
                // The slot is free once the terminate hooks are done.
                $this->ended($job);
            }
        };
    }

    /**
     * Reading is paused while jobs wait for a free slot: the server's pipeline limit then
     * holds further jobs back instead of this process buffering them.
     */
    private function watchRelay(bool $want): void
    {
        if ($want && $this->readerId === null) {
            $session = $this->session;
            $this->reader ??= function () use ($session): void {
                // Jobs written while more than one of ours was in flight were not held
                // for us (the server only holds for a worker it found idle): no report is
                // due. A frame begun in an earlier read may be from a write that was, so
                // then one is.
                $due = $session->jobsSinceWaiting || \count($this->active) <= 1 || $session->partialFrame();
                try {
                    // ext/ferry's Fibers start what fits in the free slots; not from inside a
                    // Fiber (a job ticking the loop itself), where they cannot start one.
                    $room = $session->maxConcurrency - \count($this->active);
                    if ($this->native === null || \Fiber::getCurrent() !== null || !$this->serveNative($room, true)) {
                        $session->receive();
                    }
                    $session->jobsSinceWaiting = $session->jobsSinceWaiting && $due;
                } catch (\Throwable $e) {
                    // Not for the loop's error handler: nobody could go on reading after this.
                    $this->relayFailure ??= $e;
                }
            };
            $this->readerId = $this->loop->onReadable($session->relay->readStream(), $this->reader);
        } elseif (!$want && $this->readerId !== null) {
            $this->loop->cancel($this->readerId);
            $this->readerId = null;
        }
    }

    /**
     * Lets ext/ferry's Fibers serve jobs until one needs this runner (NativeFibers::serve());
     * false when it read nothing for us.
     */
    private function serveNative(int $room, bool $once): bool
    {
        $session = $this->session;
        // With hooks to run after each job, every job is the PHP runner's: skip asking.
        if ($room < 1 || $session->terminateHooks !== [] || $session->resetHooks !== []) {
            return false;
        }
        $session->capture->release();
        [$rest, $status] = $this->native->serve($session->parser->take(), $room, $once);

        return $session->handBack($status, $rest);
    }

    /** Whether the loop holds nothing but our relay reader (which then stops watching). */
    private function nothingElseToWaitFor(): bool
    {
        if ($this->readerId !== null) {
            $this->watchRelay(false);
        }

        return !$this->loop->hasPending();
    }

    private function rethrowRelayFailure(): void
    {
        if ($this->relayFailure !== null) {
            throw $this->relayFailure;
        }
    }

    /**
     * Whether anything besides our relay reader could resume a suspended job: a Fiber that
     * waits on the loop always leaves a timer, a watcher or a deferred callback behind.
     */
    private function canResume(): bool
    {
        $relay = $this->readerId !== null;
        $direct = $this->directId !== null;
        $this->watchRelay(false);
        $this->watchDirect(false);
        $pending = $this->loop->hasPending();
        $this->watchRelay($relay);
        $this->watchDirect($direct);

        return $pending;
    }

    /**
     * The jobs the server gave up on end where they wait: JobCancelled thrown into the Fiber
     * unwinds it, a hooked socket it waited in is shut down (ext/ferry), so no half-read
     * connection is left for the next request. For exec_ttl the server drops the answer, and
     * one not suspended now (running, or not started) is left to its grace, after which it
     * kills the worker. A job whose client left is spared when the app asked for that with
     * ignore_user_abort(true), as FPM spares it.
     */
    private function cancelJobs(): void
    {
        $ids = $this->session->cancelled;
        $this->session->cancelled = [];
        foreach ($this->active as $job) {
            $id = $job->payload->id;
            $why = $ids[$id] ?? null;
            if ($why === null || ($why === 'client' && ignore_user_abort())) {
                continue;
            }
            $fiber = $job->fiber;
            if ($job->answered || $fiber === null || !$fiber->isSuspended()) {
                continue;
            }
            $reason = $why === 'client' ? 'its client left' : 'it ran past pool.exec_ttl';
            Worker::log("job $id cancelled where it waited: $reason");
            $job->failed = true;
            try {
                $fiber->throw(new JobCancelled("job $id was cancelled by the server: $reason"));
            } catch (\Throwable $e) {
                Worker::log("job $id failed while unwinding: " . Worker::describe($e));
            }
        }
    }

    /**
     * Jobs suspended with nothing on the loop able to resume them (\Fiber::suspend() called
     * directly, or a wait on another event loop) would hold their slot until the server's
     * exec_ttl; fail them now. The exception thrown into each Fiber unwinds it, so its
     * finally blocks and reset hooks run, and it becomes the job's error answer.
     */
    private function failStuckJobs(): void
    {
        foreach ($this->active as $job) {
            $id = $job->payload->id;
            $message = "job $id suspended its Fiber outside the worker's event loop, with nothing on the loop to resume it "
                . '(only wait through Ferry\Worker\Loop, or a client driven by it)';
            Worker::log($message);
            $fiber = $job->fiber;
            $job->failed = true;
            if ($fiber !== null && $fiber->isSuspended()) {
                try {
                    $fiber->throw(new \LogicException($message));
                } catch (\Throwable $e) {
                    Worker::log("job $id failed while unwinding: " . Worker::describe($e));
                }
            }
            if ($job->answered) {
                continue; // answered, or suspended again in a terminate hook: the next check sees it
            }
            // It caught the exception and suspended again: answer for it and let it go.
            $this->session->deliver($job, FrameCodec::encode(Frame::ERROR, [0, $id], $message));
            $this->ended($job);
        }
    }
}
