<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Output;

use Ferry\Worker\Job;

/**
 * @internal How application output produced during a job is kept away from the relay.
 */
interface OutputCapture
{
    /** Takes over the worker's output for good: from the handshake on, output outside a job goes to the log. */
    public function install(): void;

    public function begin(Job $job): void;

    /** Returns and clears what the job echoed so far. */
    public function take(Job $job): string;

    /** Ends the capture and returns what was not taken yet. */
    public function end(Job $job): string;

    /** Forwards output made outside any job to the log (before the worker blocks). */
    public function release(): void;

    /**
     * The jobs between begin() and end(): the ones a fatal error would leave unanswered.
     *
     * @return list<Job>
     */
    public function running(): array;
}
