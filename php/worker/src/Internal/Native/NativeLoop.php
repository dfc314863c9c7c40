<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Internal\Output\SapiCapture;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;

/**
 * @internal ext/ferry's worker loop for HttpWorker (ext/ferry/README.md, "Worker loop").
 *
 * Ferry\Ext\http_serve() reads the relay and serves the usual request in C: a job frame
 * the extension can build a Request from, without uploads, whose handler returns a
 * Response with a body and leaves no output, no PHP header. It does what the sequential loop
 * and HttpWorker::handle() do for such a job, the reset hooks before the answer and the
 * terminate hooks after it (WorkerSession::afterNativeAnswer()) included. A job whose handler
 * did anything else comes back here (RESUME, the session's $handed): serve() finishes it with
 * HttpWorker::resume() and calls http_serve() again. Any other frame, or state the PHP loop
 * must act on, makes it return to the sequential loop, which takes the bytes it read ahead
 * (WorkerSession::handBack()) and calls it again once it is idle. The path reads one way:
 * PHP calls C, C returns. FERRY_EXT_LOOP=0 keeps it off.
 */
final class NativeLoop
{
    /** it read nothing for PHP: Worker reads the relay itself */
    public const READ_HERE = 0;
    /** the bytes it read ahead, or the worker's state, are for the PHP loop */
    public const HANDED = 1;
    /** the server closed the relay */
    public const CLOSED = 2;
    /** the job in the session's $handed is HttpWorker::resume()'s to finish */
    public const RESUME = 3;

    /** set as the capture's job while a handler runs in C: output then belongs to a job */
    private readonly Job $placeholder;
    /** @var resource */
    private $in;
    /** @var resource */
    private $out;

    public static function available(WorkerSession $session): bool
    {
        return \function_exists('Ferry\Ext\http_serve') && getenv('FERRY_EXT_LOOP') !== '0' && !$session->fibers
            && $session->relay instanceof StreamRelay
            && ($session->capture instanceof SapiCapture || $session->capture instanceof SyncCapture)
            && NativeContract::agreed();
    }

    /**
     * $handler is HttpWorker's application handler; $resume(Job, mixed $result, ?array $php,
     * ?\Throwable $error): Payload is HttpWorker::resume(), for the jobs the extension returns.
     */
    public function __construct(private readonly WorkerSession $session, private readonly \Closure $handler, private readonly \Closure $resume)
    {
        $this->rebind();
        $this->placeholder = new Job(new Payload(), $session->capture);
    }

    /** Takes the relay's streams (again, in a worker forked from a mold: Fork\Mold). */
    public function rebind(): void
    {
        $relay = $this->session->relay;
        \assert($relay instanceof StreamRelay);
        $this->in = $relay->readStream();
        $this->out = $relay->writeStream();
    }

    /**
     * Serves jobs, starting with the bytes in $read (the start of a frame the PHP loop read),
     * until one needs the sequential loop; false when it read nothing for it.
     */
    public function serve(string $read): bool
    {
        $session = $this->session;
        while (($status = \Ferry\Ext\http_serve($session, $this->handler, $this->placeholder, $this->in, $this->out, $read)) === self::RESUME) {
            $read = '';
            \assert($session->handed !== null);
            [$id, $context, $body, $result, $php, $error] = $session->handed;
            $session->handed = null;
            $job = new Job(new Payload($body, $context, $id), $session->capture);
            $session->complete($job, ($this->resume)($job, $result, $php, $error));
            if ($session->readAhead === null || $session->outbox !== '' || $session->stopping || $session->closed) {
                // The job read the relay (a streamed answer), or left something for the
                // sequential loop to do before the next job.
                break;
            }
        }

        return $session->handBack($status === self::RESUME ? self::HANDED : $status);
    }
}
