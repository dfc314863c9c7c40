<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\Output\OutputCapture;

/**
 * The job being executed, handed to run() handlers as their second argument.
 *
 * takeOutput() returns whatever the application echoed while handling this job so far
 * (HttpWorker appends it to the response body). Output not taken is forwarded to STDERR
 * when the job ends, so it can never corrupt the relay.
 */
final class Job
{
    /** @internal output collected by the Fiber-mode capture */
    public string $output = '';
    /** @internal how much of $output the job flushed (ob_flush()), which cleaning keeps */
    public int $flushed = 0;
    /** @internal true once an answer (or an ERROR frame) for this job was written */
    public bool $answered = false;
    /** @internal */
    public ?\Fiber $fiber = null;
    /** @internal an exception ended it (or it was failed as stuck): in Fiber mode its Fiber is not reused */
    public bool $failed = false;
    /** @var list<\Closure> @internal */
    public array $terminateHooks = [];

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

    /**
     * Runs $hook(Job $job) once this job's answer has been written to the server, like work
     * after fastcgi_finish_request() under FPM: the client does not wait for it, but this
     * worker takes no other job (in Fiber mode: keeps this job's slot) until it returns.
     * A hook that throws is logged; the other hooks still run and the worker goes on.
     */
    public function onTerminate(callable $hook): void
    {
        if ($this->answered) {
            throw new \LogicException("job {$this->payload->id} is already answered: its terminate hooks have run");
        }
        $this->terminateHooks[] = $hook(...);
    }
}
