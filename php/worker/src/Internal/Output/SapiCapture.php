<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Output;

use Ferry\Worker\Job;

/**
 * @internal Capture for sequential jobs with ext/ferry: the job's output is what PHP hands
 * the SAPI (ext/ferry/ferry_output.c), and each job starts with one removable default
 * buffer, as a request under FPM with php.ini-production's output_buffering. So
 * `while (ob_get_level()) ob_end_clean();` discards what was echoed and ends, and what is
 * echoed after it is the answer's; the buffers a job leaves open are flushed into its
 * answer at its end. Outside a job, output goes to STDERR (the log).
 *
 * Used when the extension is loaded and no output buffer is open when the worker is
 * built but php.ini's own (the SAPI only sees what leaves the outermost buffer); else
 * SyncCapture.
 */
final class SapiCapture implements OutputCapture
{
    /** the running job (ext/ferry's loop sets its placeholder here by name) */
    /** the running job (public for ext/ferry's loop: the worker contract) */
    public ?Job $job = null;
    private bool $installed = false;

    public static function available(): bool
    {
        if (!\function_exists('Ferry\Ext\output_begin')) {
            return false;
        }
        $level = ob_get_level();
        // php.ini's output_buffering opens one default buffer before the script runs;
        // install() flushes it to the log at the handshake. Any other open buffer is
        // someone's (a test runner's) to keep.
        return $level === 0 || ($level === 1 && (int) ini_get('output_buffering') > 0 && ob_list_handlers() === ['default output handler']);
    }

    public function install(): void
    {
        if (!$this->installed) {
            $this->installed = true;
            \Ferry\Ext\output_install();
        }
    }

    public function begin(Job $job): void
    {
        $this->job = $job;
        \Ferry\Ext\output_begin();
    }

    public function take(Job $job): string
    {
        return \Ferry\Ext\output_take();
    }

    public function end(Job $job): string
    {
        $this->job = null;

        return \Ferry\Ext\output_end();
    }

    public function release(): void
    {
        // Output outside a job went to STDERR as it was written.
    }

    public function running(): array
    {
        return $this->job === null ? [] : [$this->job];
    }
}
