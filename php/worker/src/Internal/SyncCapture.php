<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Job;

/**
 * @internal One plain output buffer per job: the cheapest capture when jobs run one at a time.
 */
final class SyncCapture implements OutputCapture
{
    public function begin(Job $job): void
    {
        ob_start();
        $job->level = ob_get_level();
    }

    public function take(Job $job): string
    {
        if (ob_get_length() === 0 && ob_get_level() === $job->level) {
            return ''; // the usual case: nothing echoed
        }
        if (!$this->settle($job)) {
            // The application closed our buffer; open a fresh one so later output stays captured.
            ob_start();
            $job->level = ob_get_level();

            return '';
        }
        $output = (string) ob_get_contents();
        ob_clean();

        return $output;
    }

    public function end(Job $job): string
    {
        if (!$this->settle($job)) {
            return '';
        }

        return (string) ob_get_clean();
    }

    /**
     * Folds buffers the application left open into ours; false if ours is gone.
     */
    private function settle(Job $job): bool
    {
        while (ob_get_level() > $job->level) {
            if (!@ob_end_flush()) {
                break;
            }
        }

        return ob_get_level() === $job->level;
    }
}
