<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Output;

use Ferry\Worker\Internal\Native\NativeFibers;
use Ferry\Worker\Job;

/**
 * @internal Output capture for Fiber mode.
 *
 * Output buffers are process-wide, not per Fiber, so a buffer per job would mix the output
 * of jobs that interleave. Instead one handler with chunk size 1 receives every write as it
 * happens and files it under the job whose Fiber is running at that moment.
 */
final class FiberCapture extends BufferCapture
{
    /** @var \WeakMap<\Fiber, ?Job> */
    private \WeakMap $jobs;

    public function __construct(mixed $sink = STDERR)
    {
        parent::__construct($sink);
        $this->jobs = new \WeakMap();
    }

    public function begin(Job $job): void
    {
        if ($this->level === 0) {
            $this->install();
        }
        $fiber = \Fiber::getCurrent();
        if ($fiber !== null) {
            $this->jobs[$fiber] = $job;
        }
        $this->refusals = 0;
    }

    /** Files what $fiber echoes under $job from now on (ext/ferry's Fibers: NativeFibers). */
    public function adopt(\Fiber $fiber, Job $job): void
    {
        $this->jobs[$fiber] = $job;
    }

    public function running(): array
    {
        $running = [];
        foreach ($this->jobs as $job) {
            if ($job !== null && !NativeFibers::isPlaceholder($job)) {
                $running[] = $job;
            }
        }

        return $running;
    }

    public function take(Job $job): string
    {
        if (ob_get_level() > $this->level) {
            $this->settle();
        }
        $output = $job->output;
        $job->output = '';
        $job->flushed = 0;

        return $output;
    }

    public function end(Job $job): string
    {
        $output = $this->take($job);
        $fiber = \Fiber::getCurrent();
        if ($fiber !== null) {
            // Not unset: the Fiber serves the next job too, and replacing an entry is cheaper than adding one.
            $this->jobs[$fiber] = null;
        }

        return $output;
    }

    protected static function chunkSize(): int
    {
        return 1;
    }

    protected function collect(string $buffer, int $phase): string
    {
        $job = $this->current();
        if (($phase & PHP_OUTPUT_HANDLER_FINAL) !== 0) {
            $this->sink($buffer); // the process is ending (exit(), a fatal error): keep it in the log
        } elseif (($phase & PHP_OUTPUT_HANDLER_CLEAN) !== 0) {
            // Our buffer is always empty (chunk size 1): an ob_clean() aimed at it means the
            // running job wants to drop what it echoed and did not flush.
            $this->discard('ob_clean');
        } elseif ($job === null) {
            $this->sink($buffer);
        } else {
            $job->output .= $buffer;
            if (($phase & PHP_OUTPUT_HANDLER_FLUSH) !== 0) {
                // ob_flush(): under FPM that output would be sent, so no later clean may drop it.
                $job->flushed = \strlen($job->output);
            }
        }

        return '';
    }

    protected function discard(string $function): void
    {
        $job = $this->current();
        // ob_get_clean() returned nothing from our always-empty buffer: dropping what the job
        // echoed would lose it for good, so it stays.
        if ($job !== null && $function !== 'ob_get_clean') {
            $job->output = substr($job->output, 0, $job->flushed);
        }
    }

    private function current(): ?Job
    {
        $fiber = \Fiber::getCurrent();

        return $fiber !== null ? ($this->jobs[$fiber] ?? null) : null;
    }
}
