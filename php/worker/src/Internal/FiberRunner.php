<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Job;
use Ferry\Worker\LoopInterface;
use Ferry\Worker\Worker;

/**
 * @internal Fiber mode: every job runs in its own Fiber on one event loop.
 *
 * The relay is just another readable stream on the loop, so while a job Fiber waits
 * (Loop::sleep, awaitReadable, an async client on the same loop) new frames are read and
 * other jobs start. Answers are written at the end of each loop iteration, so they leave
 * as jobs finish, in any order, batched when several finish together.
 */
final class FiberRunner
{
    /** @var array<int, Job> running jobs by object id */
    private array $active = [];
    private ?int $readerId = null;

    public function __construct(
        private readonly Worker $worker,
        private readonly LoopInterface $loop,
    ) {
    }

    public function run(callable $handler): void
    {
        $capture = new FiberCapture();
        $capture->install();
        try {
            while (true) {
                $this->startQueued($handler, $capture);
                $this->harvest();
                $this->worker->flush();
                if ($this->worker->isStopping() && $this->active === [] && !$this->worker->hasQueuedJobs()) {
                    return;
                }
                $this->watchRelay(!$this->worker->isStopping() && !$this->worker->hasQueuedJobs());
                if ($this->active !== [] && !$this->loop->hasPending()) {
                    $this->abandonStuckJobs();
                    continue;
                }
                $this->loop->tick();
                $this->harvest();
            }
        } finally {
            $this->watchRelay(false);
            $capture->uninstall();
        }
    }

    private function startQueued(callable $handler, FiberCapture $capture): void
    {
        while (\count($this->active) < $this->worker->maxConcurrency && ($frame = $this->worker->nextJob()) !== null) {
            $job = $this->worker->prepare($frame, $capture);
            if (\is_string($job)) {
                $this->worker->queueAnswer($job);
                continue;
            }
            $worker = $this->worker;
            $job->fiber = new \Fiber(static function () use ($worker, $job, $handler, $capture): void {
                $job->answer = $worker->execute($job, $handler, $capture);
            });
            $this->active[spl_object_id($job)] = $job;
            $job->fiber->start();
        }
    }

    private function harvest(): void
    {
        foreach ($this->active as $key => $job) {
            if ($job->fiber->isTerminated()) {
                unset($this->active[$key]);
                $job->fiber = null;
                if ($job->answer !== null) {
                    $this->worker->queueAnswer($job->answer);
                }
            }
        }
    }

    /**
     * Reading is paused while jobs wait for a free slot: the server's pipeline limit then
     * holds further jobs back instead of this process buffering them.
     */
    private function watchRelay(bool $want): void
    {
        if ($want && $this->readerId === null) {
            $worker = $this->worker;
            $this->readerId = $this->loop->onReadable(
                $worker->relay()->readStream(),
                static fn () => $worker->receive()
            );
        } elseif (!$want && $this->readerId !== null) {
            $this->loop->cancel($this->readerId);
            $this->readerId = null;
        }
    }

    /**
     * Jobs suspended with nothing on the loop able to resume them would hang the worker
     * forever; fail them instead so the server gets an answer.
     */
    private function abandonStuckJobs(): void
    {
        foreach ($this->active as $key => $job) {
            unset($this->active[$key]);
            $id = $job->payload->id;
            Worker::log("job $id suspended its Fiber outside the event loop; answering with an error");
            $this->worker->queueAnswer(FrameCodec::encode(
                Frame::ERROR,
                [0, $id],
                "job $id suspended its Fiber with nothing on the worker's event loop to resume it"
            ));
        }
    }
}
