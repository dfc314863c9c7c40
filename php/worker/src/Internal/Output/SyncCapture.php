<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Output;

use Ferry\Worker\Job;

/**
 * @internal Capture for jobs that run one at a time: the buffer simply fills up and the
 * job takes its content, the cheapest way when only one job can be writing.
 *
 * Installed by the worker, the buffer is permanent (see BufferCapture). A capture nobody
 * installed (in-process tests, benchmarks) opens a removable buffer per job instead, so it
 * leaves the process' buffers as it found them.
 */
final class SyncCapture extends BufferCapture
{
    /** the running job (public for ext/ferry's loop: the worker contract, as $flushed) */
    public ?Job $job = null;
    /** what the application flushed out of our buffer (ob_flush()) during the job */
    public string $flushed = '';
    private bool $temporary = false;

    public function begin(Job $job): void
    {
        if ($this->level === 0) {
            ob_start($this->collect(...), 0, PHP_OUTPUT_HANDLER_STDFLAGS);
            $this->level = ob_get_level();
            $this->temporary = true;
        } elseif (ob_get_level() !== $this->level || ob_get_length() !== 0) {
            // What was echoed between jobs goes to the log; usually there is nothing.
            $this->release();
        }
        $this->job = $job;
        $this->refusals = 0;
    }

    public function running(): array
    {
        return $this->job === null ? [] : [$this->job];
    }

    public function take(Job $job): string
    {
        if ($this->flushed === '' && ob_get_level() === $this->level && ob_get_length() === 0) {
            return ''; // the usual case: nothing echoed
        }
        $this->settle();
        $output = $this->flushed;
        $this->flushed = '';
        if (ob_get_level() === $this->level) {
            $output .= (string) ob_get_contents();
            ob_clean();
        }

        return $output;
    }

    public function end(Job $job): string
    {
        $output = $this->flushed === '' && ob_get_level() === $this->level && ob_get_length() === 0 ? '' : $this->take($job);
        $this->job = null;
        if ($this->temporary) {
            $this->temporary = false;
            // Our temporary buffer is on top now unless the application left one of its own.
            if (ob_get_level() === $this->level) {
                ob_end_clean();
            }
            $this->level = 0;
        }

        return $output;
    }

    public function release(): void
    {
        if ($this->level === 0 || $this->job !== null) {
            return;
        }
        if (ob_get_level() === $this->level && ob_get_length() === 0) {
            return;
        }
        $this->settle();
        if (ob_get_level() === $this->level) {
            $this->sink((string) ob_get_contents());
            ob_clean();
        }
    }

    protected static function chunkSize(): int
    {
        return 0;
    }

    protected function collect(string $buffer, int $phase): string
    {
        if ($buffer === '' || ($phase & PHP_OUTPUT_HANDLER_CLEAN) !== 0) {
            return ''; // cleaning discards, whoever asked for it
        }
        if ($this->job !== null && ($phase & PHP_OUTPUT_HANDLER_FINAL) === 0) {
            // ob_flush() during a job: under FPM that output would be sent, so it stays in the body.
            $this->flushed .= $buffer;
        } else {
            // The process is ending (exit(), a fatal error) or nobody is listening: keep it in the log.
            $this->sink($buffer);
        }

        return '';
    }

    protected function discard(string $function): void
    {
        ob_clean();
    }
}
