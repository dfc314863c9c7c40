<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Internal\Output\SapiCapture;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;

/**
 * @internal Direct mode (server.mode: direct, docs/direct.md): this worker accepts HTTP/1.1
 * connections on the listening socket the server handed down (FERRY_DIRECT_FD) and serves
 * them itself, in ext/ferry's event loop (Ferry\Ext\direct_serve()). The relay stays, for
 * the server's control frames and for the jobs of its TLS and HTTP/2 listeners, which the
 * sequential loop serves as in front mode whenever direct_serve() says the relay has bytes.
 *
 * A request the C path cannot finish comes back here, as one of NativeLoop's does: a
 * handler's outcome for HttpWorker::resume() (RESUME), or a job for the PHP path whole
 * (JOB). Its answer frames then go to Ferry\Ext\direct_answer() instead of the relay
 * (the session's $directSink), which writes them to the client as HTTP/1.1.
 */
final class DirectLoop
{
    /** the relay has bytes: the sequential loop reads them */
    public const RELAY = 0;
    /** the sequential loop has something to do first (output, a queued frame, a signal); no read */
    public const AGAIN = 1;
    /** the session's $handed is HttpWorker::resume()'s to finish */
    public const RESUME = 3;
    /** the session's $handed is [id, context, body], a job for the PHP path */
    public const JOB = 4;
    /** stopping, and no connection is left */
    public const DRAINED = 5;
    /** pool.max_jobs requests served: the worker asks the server to retire it */
    public const SERVED = 6;

    private readonly Job $placeholder;
    private ?\Closure $sink = null;
    /** @var resource */
    private $in;
    private readonly int $fd;
    /** @var array<string, int|string|list<string>> */
    private readonly array $limits;

    /** Whether the server started this worker in direct mode. */
    public static function wanted(): bool
    {
        return getenv('FERRY_DIRECT_FD') !== false;
    }

    /** Whether this worker can serve direct: ext/ferry with its loop, on a stream relay. */
    public static function available(WorkerSession $session): bool
    {
        if ($session->fibers) {
            // Fiber mode: PHP runs every request, and the extension only the connections.
            return DirectFibers::available() && $session->relay instanceof StreamRelay;
        }

        return \function_exists('Ferry\Ext\direct_serve')
            && $session->relay instanceof StreamRelay
            && ($session->capture instanceof SapiCapture || $session->capture instanceof SyncCapture)
            && NativeContract::agreed();
    }

    /** Why available() said no, for the log and the server's boot error. */
    public static function unavailable(WorkerSession $session): string
    {
        return match (true) {
            !\function_exists('Ferry\Ext\direct_serve') => 'server.mode: direct needs ext/ferry loaded in the workers (ext/ferry/README.md)',
            $session->fibers && !DirectFibers::available() => 'server.mode: direct with pool.fibers needs an ext/ferry with Ferry\Ext\direct_poll() (rebuild it)',
            $session->fibers => 'server.mode: direct with pool.fibers needs HttpWorker on a stream relay',
            default => 'server.mode: direct needs a sequential HttpWorker on a pipes relay with ext/ferry\'s loop',
        };
    }

    /**
     * $handler is HttpWorker's application handler (for C), $resume HttpWorker::resume(),
     * $handle the sequential loop's job handler (for a job the PHP path takes whole).
     */
    public function __construct(
        private readonly WorkerSession $session,
        private readonly \Closure $handler,
        private readonly \Closure $resume,
        private readonly \Closure $handle,
    ) {
        $relay = $session->relay;
        \assert($relay instanceof StreamRelay);
        $this->in = $relay->readStream();
        $this->placeholder = new Job(new Payload(), $session->capture);
        $this->fd = (int) getenv('FERRY_DIRECT_FD');
        $limits = json_decode((string) getenv('FERRY_DIRECT_LIMITS'), true);
        $this->limits = (\is_array($limits) ? array_filter($limits, static fn ($v): bool => \is_int($v) || \is_array($v)) : [])
            + ['stats' => (string) getenv('FERRY_DIRECT_STATS'),
                // The leak watch checks between requests, which the C path does not stop for.
                'php_path' => $session->leaks !== null ? 1 : 0];
    }

    /**
     * Serves connections until the sequential loop has something to do: RELAY (read the
     * relay), AGAIN (no read), or DRAINED once $drain has seen every connection closed.
     */
    public function serve(bool $drain = false): int
    {
        $session = $this->session;
        while (true) {
            // What a handler the C path runs sends before its answer (103 Early Hints) goes
            // to its client, as toClient() sends what the PHP path finishes.
            $session->directSink = $this->sink ??= $this->sink(null);
            try {
                $status = \Ferry\Ext\direct_serve($session, $this->handler, $this->placeholder, $this->in, $this->fd, $this->limits, $drain);
            } finally {
                $session->directSink = null;
            }
            switch ($status) {
                case self::RESUME:
                    \assert($session->handed !== null);
                    [$id, $context, $body, $result, $php, $error] = $session->handed;
                    $session->handed = null;
                    $job = new Job(new Payload($body, $context, $id), $session->capture);
                    $this->toClient($id, fn () => $session->complete($job, ($this->resume)($job, $result, $php, $error)));
                    break;
                case self::JOB:
                    \assert($session->handed !== null);
                    [$id, $context, $body] = $session->handed;
                    $session->handed = null;
                    $job = new Job(new Payload($body, $context, $id), $session->capture);
                    $this->toClient($id, fn () => $session->finish($job, $session->execute($job, $this->handle, $session->capture)));
                    break;
                case self::SERVED:
                    Worker::log('served pool.max_jobs requests: asking to be retired');
                    $session->stop();
                    $session->flush();
                    break;
                default:
                    return $status;
            }
            if ($session->stopping || $session->closed || $session->outbox !== '') {
                return self::AGAIN;
            }
        }
    }

    /**
     * A sink for the session's bytes while job $id (null: the one the session runs) has the
     * current connection: answer frames to its client, control frames to the server.
     */
    private function sink(?int $id): \Closure
    {
        $session = $this->session;

        return static function (string $bytes) use ($session, $id): void {
            $control = '';
            $job = $id ?? $session->running;
            if (!\Ferry\Ext\direct_answer($bytes, $control) && $job !== null && isset($session->streams[$job])) {
                // The client left: a streamed answer stops at its next part, as on a STOP.
                $session->streams[$job] = true;
            }
            if ($control !== '' && !$session->closed) {
                $session->relay->write($control);
            }
        };
    }

    /**
     * Runs $finish with the session's answers going to the current connection: answer frames
     * to the client through Ferry\Ext\direct_answer(), control frames to the server (but
     * FINISHED: the server never saw job $id).
     */
    private function toClient(int $id, \Closure $finish): void
    {
        $session = $this->session;
        $session->directSink = $this->sink($id);
        try {
            $finish();
        } finally {
            $session->directSink = null;
        }
    }
}
