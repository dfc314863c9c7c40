<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\OutputCapture;

/**
 * The job being executed, handed to run() handlers as their second argument.
 *
 * Its main use is takeOutput(): whatever the application echoed while handling this job
 * so far (HttpWorker appends it to the response body). Output not taken is forwarded to
 * STDERR when the job ends, so it can never corrupt the relay.
 */
final class Job
{
    /** @internal output collected by the Fiber-mode capture */
    public string $output = '';
    /** @internal output-buffer level owned by the synchronous capture */
    public int $level = 0;
    /** @internal encoded answer frame, set when the job is done */
    public ?string $answer = null;
    /** @internal */
    public ?\Fiber $fiber = null;

    /** @internal */
    public function __construct(
        public readonly Payload $payload,
        private readonly OutputCapture $capture,
    ) {
    }

    public function takeOutput(): string
    {
        return $this->capture->take($this);
    }

    /**
     * Drops what was echoed so far (e.g. before answering with an error page).
     */
    public function discardOutput(): void
    {
        $this->capture->take($this);
    }
}
