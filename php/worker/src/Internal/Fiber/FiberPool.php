<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fiber;

use Ferry\Worker\Job;
use Ferry\Worker\Worker;

/**
 * @internal The Fibers of a Fiber-mode worker, each reused for job after job.
 *
 * A new Fiber maps, guards and later unmaps a C stack of its own: about 20 µs of system
 * time, more than the whole of a small request, against well under 1 µs to resume a parked
 * one. So a Fiber runs a job, parks, and waits for the next one.
 *
 * Nothing of a job may reach the next job in the same Fiber:
 *  - its locals are gone: each job is a fresh call of the runner's closure;
 *  - a wake-up meant for one of its waits cannot resume a later wait: every wait in
 *    Ferry\Worker\Loop (and php/tarantool's Future and Scheduler) resumes through its own
 *    Suspension, and parking is one more, which only start() holds;
 *  - an exception thrown by a loop callback it registered is not thrown into the next job:
 *    the Fiber's epoch moves on when the job ends (FiberEpoch);
 *  - a Fiber whose job ended abnormally (the runner returns false: the job failed, was
 *    failed as stuck, or its relay broke) is dropped, not parked;
 *  - the SDK's per-Fiber maps (FiberCapture, StreamedAnswer) are cleared when each job ends.
 */
final class FiberPool
{
    /** Fibers parked longer than this are freed, the least recently used first. */
    public const IDLE_SECONDS = 10.0;

    /** @var list<Suspension> the parking waits of parked Fibers, most recently parked last */
    private array $idle = [];
    /** @var list<int> when (hrtime) each of $idle parked */
    private array $since = [];
    /** Fibers created so far, for tests and diagnostics */
    private int $created = 0;

    /**
     * @param int $max most Fibers kept parked (the worker's max_concurrency)
     * @param \Closure(Job): bool $run runs one job in the current Fiber; true when the Fiber may be reused
     */
    public function __construct(
        private readonly int $max,
        private readonly \Closure $run,
        private readonly float $idleSeconds = self::IDLE_SECONDS,
    ) {
    }

    /** Runs $job in a parked Fiber, or in a new one, until the job first waits or is done. */
    public function start(Job $job): void
    {
        while ($this->idle !== []) {
            $parked = array_pop($this->idle);
            array_pop($this->since);
            $job->fiber = $parked->fiber;
            if ($parked->resume($job)) {
                return;
            }
        }
        $fiber = new \Fiber($this->serve(...));
        FiberIo::own($fiber);
        $this->created++;
        $job->fiber = $fiber;
        $fiber->start($job);
    }

    public function created(): int
    {
        return $this->created;
    }

    public function idle(): int
    {
        return \count($this->idle);
    }

    /**
     * Frees Fibers parked for more than $idleSeconds (every parked one with $all), so that a
     * burst of concurrency does not hold its stacks for the rest of the worker's life.
     */
    public function trim(bool $all = false): void
    {
        if ($this->idle === []) {
            return;
        }
        $cutoff = hrtime(true) - (int) ($this->idleSeconds * 1e9);
        while ($this->idle !== [] && ($all || $this->since[0] < $cutoff)) {
            $parked = array_shift($this->idle);
            array_shift($this->since);
            $parked->resume(null); // serve() returns and the Fiber ends
        }
    }

    private function serve(Job $job): void
    {
        $fiber = $job->fiber;
        // One parking wait per Fiber, used again at every park: only start() and trim() can
        // end it, and only while the Fiber is parked.
        $parking = new Suspension($fiber);
        do {
            // PHP keeps error_reporting per Fiber and a new Fiber starts from the ini value:
            // a parked Fiber still has what its last job set, which code outside it may have changed back since.
            $reporting = (int) ini_get('error_reporting');
            if (error_reporting() !== $reporting) {
                error_reporting($reporting);
            }
            $issued = FiberEpoch::$issued;
            try {
                $reusable = ($this->run)($job);
            } finally {
                // Unless the job registered a loop callback, no callback holds this epoch.
                if (FiberEpoch::$issued !== $issued) {
                    FiberEpoch::advance($fiber);
                }
            }
        } while ($reusable && ($job = $this->park($parking)) !== null);
    }

    private function park(Suspension $parking): ?Job
    {
        if (\count($this->idle) >= $this->max) {
            return null;
        }
        $this->idle[] = $parking;
        $this->since[] = hrtime(true);
        try {
            return $parking->suspend();
        } catch (\Throwable $e) {
            // Only code throwing into Fibers it does not own gets here; this one is done.
            $at = array_search($parking, $this->idle, true);
            if ($at !== false) {
                array_splice($this->idle, $at, 1);
                array_splice($this->since, $at, 1);
            }
            Worker::log('a parked worker Fiber had an exception thrown into it; dropped: ' . Worker::describe($e));

            return null;
        }
    }
}
