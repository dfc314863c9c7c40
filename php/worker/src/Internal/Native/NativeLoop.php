<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Internal\Output\SapiCapture;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;

/**
 * @internal ext/ferry's worker loop for HttpWorker (ext/ferry/README.md, "Worker loop").
 *
 * Ferry\Ext\http_serve() reads the relay and serves the usual request in C: a job frame
 * the extension can build a Request from, without uploads, whose handler returns a
 * Response with a body and leaves no output, no PHP header. It does what Worker::run()
 * and HttpWorker::handle() do for such a job, the reset hooks before the answer and the
 * terminate hooks after it (Worker::afterAnswer()) included; a job whose handler did
 * anything else is finished by HttpWorker::resume(). Any other frame, or state the PHP
 * loop must act on, makes it return the bytes it has not served to Worker::run(), which
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

    public static function available(Worker $worker): bool
    {
        return \function_exists('Ferry\Ext\http_serve') && getenv('FERRY_EXT_LOOP') !== '0' && !$worker->fibers
            && $worker->relay() instanceof StreamRelay
            && ($worker->capture() instanceof SapiCapture || $worker->capture() instanceof SyncCapture);
    }

    public function __construct(private readonly Worker $worker, private readonly HttpWorker $http, private readonly \Closure $handler)
    {
        $relay = $worker->relay();
        \assert($relay instanceof StreamRelay);
        $this->in = $relay->readStream();
        $this->out = $relay->writeStream();
        $capture = $worker->capture();
        $this->placeholder = new Job(new Payload(), $capture);
        $this->resume = static function (int $id, string $context, string $body, mixed $result, ?array $php, ?\Throwable $error) use ($worker, $http, $capture): void {
            $job = new Job(new Payload($body, $context, $id), $capture);
            $worker->complete($job, $http->resume($job, $result, $php, $error));
        };
        // Hooks are given the job as Worker::finish() gives it; only answers with hooks to run pay for it.
        $this->terminate = static function (int $id, string $context, string $body) use ($worker, $capture): void {
            $worker->afterAnswer(new Job(new Payload($body, $context, $id), $capture), true);
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
        return \Ferry\Ext\http_serve($this->worker, $this->http, $this->handler, $this->resume, $this->terminate, $this->placeholder, $this->in, $this->out, $this->worker->maxPayload(), $read);
    }

    /**
     * What a running serve() has read ahead, which it then leaves to the PHP loop: called
     * before PHP reads the relay during a job (Worker::partWanted()).
     */
    public static function unread(): string
    {
        return \function_exists('Ferry\Ext\http_serve_unread') ? \Ferry\Ext\http_serve_unread() : '';
    }
}
