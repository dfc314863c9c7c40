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
 * terminate hooks after it (WorkerSession::afterAnswer()) included; a job whose handler did
 * anything else is finished by HttpWorker::resume(). Any other frame, or state the PHP
 * loop must act on, makes it return the bytes it has not served to the sequential loop, which
 * calls it again once it is idle. FERRY_EXT_LOOP=0 keeps it off.
 */
final class NativeLoop
{
    /** it read nothing for PHP: Worker reads the relay itself */
    public const READ_HERE = 0;
    /** the bytes returned, or the worker's state, are for the PHP loop */
    public const HANDED = 1;
    /** the server closed the relay */
    public const CLOSED = 2;

    /** set as the capture's job while a handler runs in C: output then belongs to a job */
    private readonly Job $placeholder;
    private readonly \Closure $resume;
    private readonly \Closure $terminate;
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
     * ?\Throwable $error): Payload is HttpWorker::resume(), for the jobs the extension leaves.
     */
    public function __construct(private readonly WorkerSession $session, private readonly \Closure $handler, \Closure $resume)
    {
        $relay = $session->relay;
        \assert($relay instanceof StreamRelay);
        $this->in = $relay->readStream();
        $this->out = $relay->writeStream();
        $capture = $session->capture;
        $this->placeholder = new Job(new Payload(), $capture);
        $this->resume = static function (int $id, string $context, string $body, mixed $result, ?array $php, ?\Throwable $error) use ($session, $resume, $capture): void {
            $job = new Job(new Payload($body, $context, $id), $capture);
            $session->complete($job, $resume($job, $result, $php, $error));
        };
        // Hooks are given the job as WorkerSession::finish() gives it; only answers with hooks to run pay for it.
        $this->terminate = static function (int $id, string $context, string $body) use ($session, $capture): void {
            $session->afterAnswer(new Job(new Payload($body, $context, $id), $capture), true);
        };
    }

    /**
     * Serves jobs, starting with the bytes in $read (the start of a frame the PHP loop read),
     * until one needs PHP.
     *
     * @return array{string, int} the bytes read and not served, and READ_HERE, HANDED or CLOSED
     */
    public function serve(string $read): array
    {
        return \Ferry\Ext\http_serve($this->session, $this->handler, $this->resume, $this->terminate, $this->placeholder, $this->in, $this->out, $read);
    }

    /**
     * What a running serve() has read ahead, which it then leaves to the PHP loop: called
     * before PHP reads the relay during a job (StreamParts::wanted()).
     */
    public static function unread(): string
    {
        return \function_exists('Ferry\Ext\http_serve_unread') ? \Ferry\Ext\http_serve_unread() : '';
    }
}
