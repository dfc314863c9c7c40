<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Job;

/**
 * @internal Output capture for Fiber mode.
 *
 * Output buffers are process-wide, not per Fiber, so a buffer per job would mix the output
 * of jobs that interleave. Instead one handler with chunk size 1 receives every write as it
 * happens and files it under the job whose Fiber is running at that moment.
 */
final class FiberCapture implements OutputCapture
{
    /** @var \WeakMap<\Fiber, Job> */
    private \WeakMap $jobs;
    private int $level = 0;

    public function __construct()
    {
        $this->jobs = new \WeakMap();
    }

    public function install(): void
    {
        ob_start($this->collect(...), 1);
        $this->level = ob_get_level();
    }

    public function uninstall(): void
    {
        while ($this->level > 0 && ob_get_level() >= $this->level) {
            if (!@ob_end_flush()) {
                break;
            }
        }
        $this->level = 0;
    }

    public function begin(Job $job): void
    {
        $fiber = \Fiber::getCurrent();
        if ($fiber !== null) {
            $this->jobs[$fiber] = $job;
        }
    }

    public function take(Job $job): string
    {
        $this->settle();
        $output = $job->output;
        $job->output = '';

        return $output;
    }

    public function end(Job $job): string
    {
        $output = $this->take($job);
        $fiber = \Fiber::getCurrent();
        if ($fiber !== null) {
            unset($this->jobs[$fiber]);
        }

        return $output;
    }

    private function collect(string $buffer, int $phase): string
    {
        if ($buffer !== '') {
            $fiber = \Fiber::getCurrent();
            if ($fiber !== null && isset($this->jobs[$fiber])) {
                $this->jobs[$fiber]->output .= $buffer;
            } else {
                fwrite(STDERR, $buffer);
            }
        }

        return '';
    }

    /** Flushes buffers the running job opened above ours, so their content reaches collect(). */
    private function settle(): void
    {
        while ($this->level > 0 && ob_get_level() > $this->level) {
            if (!@ob_end_flush()) {
                break;
            }
        }
    }
}
