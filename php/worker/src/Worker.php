<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\Environment;
use Ferry\Worker\Internal\Fiber\FiberRunner;
use Ferry\Worker\Internal\JobFrames;
use Ferry\Worker\Internal\Leak\LeakWatch;
use Ferry\Worker\Internal\SequentialRunner;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Relay\RelayInterface;
use Ferry\Worker\Relay\StreamRelay;

/**
 * The worker side of docs/protocol.md: handshake, job frames in, answers out, stop.
 *
 * Two ways to use it:
 *  - run($handler): reads pipelined jobs and writes each answer as soon as its job is done;
 *    optionally each job in its own Fiber;
 *  - waitPayload()/respond()/error(): one job at a time, for custom loops.
 *
 * The conversation itself (its state, the frames) is the WorkerSession's, which the
 * loops and ext/ferry share.
 */
final class Worker
{
    public const DEFAULT_MAX_CONCURRENCY = 64;

    private readonly WorkerSession $session;
    /** the job waitPayload() returned, until respond() or error() answers it */
    private ?Job $current = null;
    private static ?\Closure $logger = null;
    public readonly int $maxConcurrency;

    public function __construct(
        RelayInterface $relay,
        public readonly bool $fibers = false,
        int $maxConcurrency = self::DEFAULT_MAX_CONCURRENCY,
        private readonly FrameCodec $codec = new FrameCodec(),
        ?LoopInterface $loop = null,
        ?string $token = null,
    ) {
        if ($maxConcurrency < 1) {
            throw new \InvalidArgumentException("maxConcurrency must be at least 1, got $maxConcurrency");
        }
        $this->maxConcurrency = $maxConcurrency;
        // Taken here rather than at the handshake so that bootstrap code never sees it.
        $this->session = new WorkerSession($relay, $fibers, $maxConcurrency, $codec, $token ?? Environment::takeRelayToken(), $loop);
    }

    /**
     * Builds a worker from the environment the server gives its workers:
     * FERRY_RELAY (pipes:R,W | pipes | unix:///path | tcp://host:port, default pipes),
     * FERRY_RELAY_TOKEN (sent back in the handshake, then removed from the environment),
     * FERRY_FIBERS=1, FERRY_MAX_CONCURRENCY (Fiber mode, default 64), FERRY_MAX_PAYLOAD
     * (bytes, default 64 MiB).
     */
    public static function create(?bool $fibers = null, ?int $maxConcurrency = null): self
    {
        $token = Environment::takeRelayToken();
        $relay = StreamRelay::fromDsn(Environment::takeRelay());
        $maxPayload = Environment::int('FERRY_MAX_PAYLOAD', FrameCodec::DEFAULT_MAX_PAYLOAD);

        return new self(
            $relay,
            $fibers ?? getenv('FERRY_FIBERS') === '1',
            $maxConcurrency ?? Environment::int('FERRY_MAX_CONCURRENCY', self::DEFAULT_MAX_CONCURRENCY),
            new FrameCodec($maxPayload),
            token: $token,
        );
    }

    /**
     * Whether Ferry started this process as a worker. Takes the relay settings
     * (FERRY_RELAY, FERRY_RELAY_TOKEN) out of the environment on the first call, so that
     * application code never sees the secret and the programs it starts do not take
     * themselves for workers; create() reads them from here. Call it before the
     * application reads its environment when that happens before the worker is built
     * (a framework runtime handing $_SERVER to the app, for instance).
     */
    public static function claimEnvironment(): bool
    {
        Environment::takeRelayToken();

        return Environment::takeRelay() !== '';
    }

    /**
     * Waits for the server's CONTROL {"pid":..} and answers with ours (and the relay token).
     * Called lazily by run() and waitPayload(); nothing is written to the relay before it.
     */
    public function handshake(): void
    {
        $this->session->handshake();
    }

    /** @internal The conversation with the server, for the loops and ext/ferry. */
    public function session(): WorkerSession
    {
        return $this->session;
    }

    /**
     * Next job, or null once the server asked us to stop (or went away).
     */
    public function waitPayload(): ?Payload
    {
        $session = $this->session;
        $session->handshake();
        while (true) {
            $frame = $session->nextJob();
            if ($frame !== null) {
                $job = JobFrames::job($frame, $session->capture);
                if (\is_string($job)) {
                    $session->queue($job);
                    $session->flush();
                    continue;
                }
                $this->current = $job;

                return $job->payload;
            }
            $session->flush();
            if ($session->isStopping()) {
                return null;
            }
            $session->receive();
        }
    }

    /**
     * Answers a job (by default the last one returned by waitPayload(), once: a second
     * answer throws a LogicException) and runs the terminate hooks.
     */
    public function respond(Payload|string $answer, ?int $id = null): void
    {
        $this->answer($id, fn (int $id): string => JobFrames::answer($answer, $id, $this->codec->maxPayload));
    }

    /**
     * Fails a job (by default the last one returned by waitPayload(), once) with an ERROR frame.
     */
    public function error(string $message, ?int $id = null): void
    {
        $this->answer($id, static fn (int $id): string => FrameCodec::encode(Frame::ERROR, [0, $id], $message));
    }

    /**
     * Registers $hook(Job $job), run after the answer of every job has been written (after
     * the job's own Job::onTerminate() hooks): work the client should not wait for. The
     * worker takes no new job until the hooks are done; one that throws is logged.
     */
    public function onTerminate(callable $hook): self
    {
        $this->session->terminateHooks[] = $hook(...);

        return $this;
    }

    /**
     * Tells the server this worker is leaving (CONTROL {"stop":true}); run() returns once
     * the jobs already received are answered.
     */
    public function stop(): void
    {
        $this->session->stop();
    }

    /**
     * Serves jobs until the server sends stop. $handler(Payload $payload, Job $job) returns
     * a Payload (context + body), a string (body) or null (empty answer). A Throwable becomes
     * an ERROR frame for that job only. Output is captured and forwarded to STDERR.
     * Each answer is written as soon as its job is done, then the terminate hooks run.
     */
    public function run(callable $handler): void
    {
        $session = $this->session;
        $session->handshake();
        if ($this->fibers) {
            (new FiberRunner($session, $session->loop ??= Loop::get()))->run($handler);

            return;
        }
        (new SequentialRunner($session))->run($handler);
    }

    public function isStopping(): bool
    {
        return $this->session->isStopping();
    }

    /**
     * Sends one part of job $id's answer now (a STREAM frame, docs/protocol.md "Streamed
     * answers"); the job's ordinary answer ends it later. Returns false, and sends
     * nothing, once the server has stopped the job because its client went away: the
     * caller then stops producing and answers (with an empty body) at once.
     */
    public function sendPart(int $id, string $context, string $body): bool
    {
        return $this->session->parts->send($id, $context, $body);
    }

    /**
     * Whether the server still wants job $id's answer parts (false after a STOP frame
     * for it, or when the relay has closed). Looks at what the server sent without
     * blocking.
     */
    public function partWanted(int $id): bool
    {
        return $this->session->parts->wanted($id);
    }

    /**
     * Names a long-lived object for the leak watch (pool.leak_watch): its properties are
     * compared after each checked request with their state after warm-up, and a change is
     * reported as "name (shared instance, Class) changed between requests: property p".
     * $value is an object, an array whose object elements are each watched as "name[key]"
     * (a container's shared instances), or a Closure returning either, called at each
     * check. Objects are held weakly. Costs one array entry when the watch is off.
     *
     * @param object|array<mixed> $value
     */
    public static function watch(string $name, object|array $value): void
    {
        LeakWatch::watch($name, $value);
    }

    /**
     * Replaces where the SDK's diagnostics go (default: one line per message on STDERR,
     * which the server forwards to its log).
     *
     * @param (\Closure(string): void)|null $logger
     */
    public static function setLogger(?\Closure $logger): void
    {
        self::$logger = $logger;
    }

    public static function log(string $message): void
    {
        if (self::$logger !== null) {
            (self::$logger)($message);

            return;
        }
        fwrite(STDERR, '[ferry-worker ' . getmypid() . '] ' . rtrim($message) . "\n");
    }

    public static function describe(\Throwable $e): string
    {
        return $e::class . ': ' . $e->getMessage() . ' in ' . $e->getFile() . ':' . $e->getLine();
    }

    /**
     * @param \Closure(int): string $encode
     */
    private function answer(?int $id, \Closure $encode): void
    {
        $job = $this->current;
        if ($id !== null && $id !== $job?->payload->id) {
            $this->session->queue($encode($id));
            $this->session->flush();

            return;
        }
        if ($job === null) {
            throw new \LogicException(
                'no job to answer: the job from waitPayload() is answered already (the server may have given its id '
                . 'to another job since); call waitPayload() first or pass the job id'
            );
        }
        $this->current = null;
        $this->session->finish($job, $encode($job->payload->id));
    }
}
