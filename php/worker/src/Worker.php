<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\Environment;
use Ferry\Worker\Internal\FatalAnswer;
use Ferry\Worker\Internal\Fiber\FiberRunner;
use Ferry\Worker\Internal\JobFrames;
use Ferry\Worker\Internal\Leak\LeakWatch;
use Ferry\Worker\Internal\Native\NativeFibers;
use Ferry\Worker\Internal\Native\NativeLoop;
use Ferry\Worker\Internal\Output\FiberCapture;
use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Internal\Output\SapiCapture;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Relay\RelayClosedException;
use Ferry\Worker\Relay\RelayInterface;
use Ferry\Worker\Relay\StreamRelay;

/**
 * The worker side of docs/protocol.md: handshake, job frames in, answers out, stop.
 *
 * Two ways to use it:
 *  - run($handler): reads pipelined jobs and writes each answer as soon as its job is done;
 *    optionally each job in its own Fiber;
 *  - waitPayload()/respond()/error(): one job at a time, for custom loops.
 */
final class Worker
{
    public const DEFAULT_MAX_CONCURRENCY = 64;

    private FrameParser $parser;
    private bool $started = false;
    private bool $stopping = false;
    private bool $closed = false;
    /** @var \SplQueue<Frame> jobs received but not started */
    private \SplQueue $jobs;
    /** frames waiting for the next write (pongs, errors for malformed jobs, answers) */
    private string $outbox = '';
    /** the job waitPayload() returned, until respond() or error() answers it */
    private ?Job $current = null;
    private readonly OutputCapture $capture;
    /** @var list<\Closure> */
    private array $terminateHooks = [];
    private ?string $token;
    /** null unless the server runs with pool.leak_watch */
    private readonly ?LeakWatch $leaks;
    private static ?\Closure $logger = null;
    /** the control frame {"finished":true}, the same after every job with terminate hooks */
    private static ?string $finished = null;
    /** @var array<int, bool> jobs that sent answer parts => whether the server stopped them */
    private array $streams = [];
    public readonly int $maxConcurrency;
    /** @internal jobs came since the server was last told that every job waits */
    public bool $jobsSinceWaiting = false;
    /** both sides agreed in the handshake that this Fiber worker reports its waits */
    private bool $reportsWaits = false;

    public function __construct(
        private readonly RelayInterface $relay,
        public readonly bool $fibers = false,
        int $maxConcurrency = self::DEFAULT_MAX_CONCURRENCY,
        private readonly FrameCodec $codec = new FrameCodec(),
        private ?LoopInterface $loop = null,
        ?string $token = null,
    ) {
        if ($maxConcurrency < 1) {
            throw new \InvalidArgumentException("maxConcurrency must be at least 1, got $maxConcurrency");
        }
        $this->maxConcurrency = $maxConcurrency;
        $this->parser = new FrameParser($codec);
        $this->jobs = new \SplQueue();
        // Fibers interleave jobs, and PHP has one output stack: each job needs a buffer of its own.
        $this->capture = $fibers ? new FiberCapture() : (SapiCapture::available() ? new SapiCapture() : new SyncCapture());
        // Taken here rather than at the handshake so that bootstrap code never sees it.
        $this->token = $token ?? Environment::takeRelayToken();
        $this->leaks = LeakWatch::fromEnvironment($this);
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
        if ($this->started) {
            return;
        }
        $this->started = true;
        if ($this->relay->usesStdout()) {
            // STDOUT carries frames: PHP errors must go to STDERR instead.
            ini_set('display_errors', 'stderr');
        }
        if (\PHP_SAPI === 'cli' && ini_get('display_errors') === 'stderr' && ini_get('log_errors') && (string) ini_get('error_log') === '') {
            // The CLI logs to STDERR too: each error would reach the server's log twice.
            ini_set('log_errors', '0');
        }
        // A fatal error ends the process: the jobs it leaves get a 500, not the 502 of a vanished worker.
        FatalAnswer::register($this);
        // From here on, output during a job is that job's; any other output goes to STDERR
        // on every relay, so behaviour does not change with the transport.
        $this->capture->install();
        $frame = null;
        while ($frame === null) {
            try {
                $this->parser->push($this->relay->read());
            } catch (RelayClosedException) {
                $this->closed = true;

                return;
            }
            $frame = $this->parser->next();
        }
        $hello = $frame->has(Frame::CONTROL) ? json_decode($frame->payload, true) : null;
        if (\is_array($hello) && !empty($hello['stop'])) {
            $this->stopping = true;

            return;
        }
        if (!\is_array($hello) || !isset($hello['pid'])) {
            throw new ProtocolException(sprintf(
                'expected the handshake CONTROL {"pid":..} as first frame, got flags 0x%02x payload %s',
                $frame->flags,
                json_encode(substr($frame->payload, 0, 64), JSON_INVALID_UTF8_SUBSTITUTE)
            ));
        }
        $answer = ['pid' => getmypid()];
        if ($this->token !== null) {
            $answer['token'] = $this->token;
        }
        if ($this->fibers && !empty($hello['waits'])) {
            // We say when every job we run is waiting, so the server may hold jobs while we are busy.
            $this->reportsWaits = true;
            $answer['waits'] = true;
        }
        $this->relay->write(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode($answer)));
        $this->dispatch($this->parser->drain());
    }

    /**
     * Next job, or null once the server asked us to stop (or went away).
     */
    public function waitPayload(): ?Payload
    {
        $this->handshake();
        while (true) {
            $frame = $this->nextJob();
            if ($frame !== null) {
                $job = JobFrames::job($frame, $this->capture);
                if (\is_string($job)) {
                    $this->outbox .= $job;
                    $this->flush();
                    continue;
                }
                $this->current = $job;

                return $job->payload;
            }
            $this->flush();
            if ($this->stopping || $this->closed) {
                return null;
            }
            $this->receive();
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
        $this->terminateHooks[] = $hook(...);

        return $this;
    }

    /**
     * Tells the server this worker is leaving (CONTROL {"stop":true}); run() returns once
     * the jobs already received are answered.
     */
    public function stop(): void
    {
        if (!$this->stopping && !$this->closed && $this->started) {
            $this->outbox .= FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"stop":true}');
            $this->flush();
        }
        $this->stopping = true;
    }

    /**
     * Serves jobs until the server sends stop. $handler(Payload $payload, Job $job) returns
     * a Payload (context + body), a string (body) or null (empty answer). A Throwable becomes
     * an ERROR frame for that job only. Output is captured and forwarded to STDERR.
     * Each answer is written as soon as its job is done, then the terminate hooks run.
     */
    public function run(callable $handler): void
    {
        $this->handshake();
        if ($this->fibers) {
            $this->loop ??= Loop::get();
            (new FiberRunner($this, $this->loop))->run($handler);

            return;
        }
        $this->sequential($handler, null);
    }

    /**
     * @internal run() for HttpWorker with ext/ferry's loop: while nothing but usual jobs
     * arrive, $native serves them in C; everything else comes back here.
     */
    public function runNative(callable $handler, NativeLoop $native): void
    {
        $this->handshake();
        $this->sequential($handler, $this->leaks === null ? $native : null);
    }

    /**
     * @internal run() for HttpWorker in Fiber mode with ext/ferry: where the runner would
     * read the relay, $native reads it and runs the usual jobs in C (NativeFibers).
     */
    public function runFibers(callable $handler, NativeFibers $native): void
    {
        $this->handshake();
        $this->loop ??= Loop::get();
        $usable = $this->leaks === null && NativeFibers::available($this, $this->loop);
        (new FiberRunner($this, $this->loop, $usable ? $native : null))->run($handler);
    }

    /**
     * @internal Lets ext/ferry's Fibers serve jobs until one needs the PHP runner (see
     * NativeFibers::serve()); false when it read nothing for us.
     */
    public function serveFibers(NativeFibers $native, int $room, bool $once): bool
    {
        // With hooks to run after each job, every job is the PHP runner's: skip asking.
        if ($room < 1 || $this->terminateHooks !== [] || $native->hooked()) {
            return false;
        }
        $this->capture->release();
        [$rest, $status] = $native->serve($this->parser->take(), $room, $once);
        if ($status === NativeLoop::CLOSED) {
            $this->closed = true;
        }
        if ($rest !== '') {
            $this->parser->push($rest);
            $this->dispatch($this->parser->drain());
        }

        return $status !== NativeLoop::READ_HERE;
    }

    private function sequential(callable $handler, ?NativeLoop $native): void
    {
        $capture = $this->capture;
        $this->leaks?->serve($handler, $capture);
        $jobs = $this->jobs;
        while (true) {
            while (!$jobs->isEmpty()) {
                $job = JobFrames::job($jobs->dequeue(), $capture);
                if (\is_string($job)) {
                    $this->outbox .= $job;
                    continue;
                }
                // A pong or an error queued meanwhile must not wait for this job.
                if ($this->outbox !== '') {
                    $this->flush();
                }
                $this->finish($job, $this->execute($job, $handler, $capture));
            }
            $this->flush();
            if ($this->stopping || $this->closed) {
                return;
            }
            if ($native !== null && $this->serveNative($native)) {
                continue;
            }
            $this->receive();
        }
    }

    /** Lets ext/ferry serve jobs until one needs PHP; false when it read nothing for us. */
    private function serveNative(NativeLoop $native): bool
    {
        [$rest, $status] = $native->serve($this->parser->take());
        if ($status === NativeLoop::CLOSED) {
            $this->closed = true;
        }
        if ($rest !== '') {
            $this->parser->push($rest);
            $this->dispatch($this->parser->drain());
        }

        return $status !== NativeLoop::READ_HERE;
    }

    /**
     * @internal ext/ferry's loop ran job $job's handler and HttpWorker::resume() made its
     * answer: what execute() and finish() do after the handler.
     */
    public function complete(Job $job, Payload $answer): void
    {
        // Passed on as a temporary, the frame has no other reference: finish() flags it in
        // place instead of copying an answer that may be most of memory_limit.
        $this->finish($job, $this->encodeAnswer($job, $answer));
    }

    private function encodeAnswer(Job $job, Payload $answer): string
    {
        try {
            return JobFrames::answer($answer, $job->payload->id, $this->codec->maxPayload);
        } finally {
            $rest = $this->capture->end($job);
            if ($rest !== '') {
                fwrite(STDERR, $rest);
            }
        }
    }

    public function isStopping(): bool
    {
        return $this->stopping || $this->closed;
    }

    /** @internal */
    public function relay(): RelayInterface
    {
        return $this->relay;
    }

    /** @internal the largest frame payload either side may send */
    public function maxPayload(): int
    {
        return $this->codec->maxPayload;
    }

    /** @internal */
    public function capture(): OutputCapture
    {
        return $this->capture;
    }

    /**
     * @internal One read from the relay (blocks if nothing is available); queues the jobs.
     */
    public function receive(): void
    {
        $this->capture->release();
        try {
            $this->parser->push($this->relay->read());
        } catch (RelayClosedException) {
            $this->closed = true;

            return;
        }
        $this->dispatch($this->parser->drain());
    }

    /** @internal whether part of a frame has been read and the rest has not */
    public function partialFrame(): bool
    {
        return $this->parser->buffered() > 0;
    }

    /** @internal */
    public function nextJob(): ?Frame
    {
        return $this->jobs->isEmpty() ? null : $this->jobs->dequeue();
    }

    /** @internal */
    public function hasQueuedJobs(): bool
    {
        return !$this->jobs->isEmpty();
    }

    /**
     * @internal Runs one job and returns its encoded answer frame.
     */
    public function execute(Job $job, callable $handler, OutputCapture $capture): string
    {
        $id = $job->payload->id;
        $capture->begin($job);
        try {
            $answer = JobFrames::answer($handler($job->payload, $job), $id, $this->codec->maxPayload);
        } catch (\Throwable $e) {
            $job->failed = true;
            self::log(sprintf("job %d failed: %s\n%s", $id, self::describe($e), $e->getTraceAsString()));
            $answer = FrameCodec::encode(Frame::ERROR, [0, $id], self::describe($e));
        } finally {
            $rest = $capture->end($job);
            if ($rest !== '') {
                fwrite(STDERR, $rest);
            }
        }

        return $answer;
    }

    /**
     * @internal Writes the job's answer now (unless it was answered already), then runs
     * its terminate hooks.
     */
    public function finish(Job $job, string $answer): void
    {
        if ($job->terminateHooks === [] && $this->terminateHooks === []) {
            // The usual job without hooks: afterAnswer() would only do this.
            $this->deliver($job, $answer);
            $this->leaks?->finished($job);

            return;
        }
        // The server would otherwise count this worker free as soon as the answer is in, and
        // send the next request to wait behind the hooks while another worker idles. ('' is
        // a leak replay's: nothing is written.)
        $finishing = !$job->answered && \strlen($answer) >= 12;
        if ($finishing) {
            $answer[10] = \chr(\ord($answer[10]) | Frame::FINISHING);
        }
        $this->deliver($job, $answer);
        $this->afterAnswer($job, $finishing);
    }

    /**
     * @internal Runs the terminate hooks of a job whose answer has been written, then tells
     * the server they are done if that answer said they would run ($finishing: it carried
     * FINISHING). ext/ferry's loop calls it after the answers it writes.
     */
    public function afterAnswer(Job $job, bool $finishing): void
    {
        $hooks = $this->terminateHooks === [] ? $job->terminateHooks : [...$job->terminateHooks, ...$this->terminateHooks];
        $job->terminateHooks = [];
        foreach ($hooks as $hook) {
            try {
                $hook($job);
            } catch (\Throwable $e) {
                self::log(sprintf("terminate hook of job %d failed: %s\n%s", $job->payload->id, self::describe($e), $e->getTraceAsString()));
            }
        }
        $this->leaks?->finished($job);
        if ($finishing) {
            $this->outbox .= self::$finished ??= FrameCodec::encode(Frame::CONTROL, [], Frame::FINISHED);
            $this->flush();
        }
    }

    /** @internal Writes the job's answer with whatever else is queued, once per job. */
    public function deliver(Job $job, string $answer): void
    {
        if ($job->answered) {
            return;
        }
        $job->answered = true;
        unset($this->streams[$job->payload->id]);
        // What flush() does, with the answer: one call less on every job's way out.
        $bytes = $this->outbox . $answer;
        $this->outbox = '';
        if ($bytes !== '' && !$this->closed) {
            $this->relay->write($bytes);
        }
    }

    /** @internal Writes everything queued for the server in one write. */
    public function flush(): void
    {
        if ($this->outbox === '') {
            return;
        }
        $bytes = $this->outbox;
        $this->outbox = '';
        if (!$this->closed) {
            $this->relay->write($bytes);
        }
    }

    /**
     * Sends one part of job $id's answer now (a STREAM frame, docs/protocol.md "Streamed
     * answers"); the job's ordinary answer ends it later. Returns false, and sends
     * nothing, once the server has stopped the job because its client went away: the
     * caller then stops producing and answers (with an empty body) at once.
     */
    public function sendPart(int $id, string $context, string $body): bool
    {
        if (!$this->partWanted($id)) {
            return false;
        }
        $this->streams[$id] ??= false;
        $max = $this->codec->maxPayload;
        do {
            // A part over the frame limit goes as several frames: the server only
            // sees bytes.
            $take = max(0, $max - \strlen($context));
            $this->outbox .= FrameCodec::encode(Frame::CODEC_RAW, [\strlen($context), $id], $context . substr($body, 0, $take), Frame::STREAM);
            $body = (string) substr($body, $take);
            $context = '';
            $this->flush();
        } while ($body !== '');
        if ($this->fibers && $this->loop instanceof Loop && \Fiber::getCurrent() !== null) {
            // A generator that blocks between parts (usleep, a blocking client) never
            // suspends, and only the runner reads the relay in Fiber mode: the STOP that
            // ends this stream (its client gone, a reload, a shutdown) would never be
            // seen. One turn of the loop per part reads it.
            $this->loop->wait(0.0);
        }

        return true;
    }

    /**
     * Whether the server still wants job $id's answer parts (false after a STOP frame
     * for it, or when the relay has closed). Looks at what the server sent without
     * blocking.
     */
    public function partWanted(int $id): bool
    {
        if (!$this->fibers && !$this->closed) {
            // In Fiber mode the runner reads while jobs run and dispatches the STOP.
            $in = $this->relay->readStream();
            // Bytes ext/ferry's loop read ahead come before anything read here.
            $ahead = NativeLoop::unread();
            if ($ahead !== '') {
                $this->parser->push($ahead);
                $this->dispatch($this->parser->drain());
            }
            $read = [$in];
            $write = $except = null;
            while (!$this->closed && @stream_select($read, $write, $except, 0) > 0) {
                try {
                    $this->parser->push($this->relay->read());
                } catch (RelayClosedException) {
                    $this->closed = true;
                }
                $this->dispatch($this->parser->drain());
                $read = [$in];
            }
        }

        return !$this->closed && !($this->streams[$id] ?? false);
    }

    /** @internal */
    public function queueAnswer(string $frame): void
    {
        $this->outbox .= $frame;
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
     * @param list<Frame> $frames
     */
    private function dispatch(array $frames): void
    {
        foreach ($frames as $frame) {
            if (($frame->flags & Frame::CONTROL) === 0) {
                $this->jobs->enqueue($frame);
                $this->jobsSinceWaiting = $this->reportsWaits;
                continue;
            }
            if (($frame->streamFlags & Frame::STOP) !== 0) {
                // The client of a streamed answer left; a late STOP (the job has been
                // answered) names no job of ours any more.
                $id = $frame->options[1] ?? 0;
                if (isset($this->streams[$id])) {
                    $this->streams[$id] = true;
                }
                continue;
            }
            if (($frame->streamFlags & Frame::PING) !== 0) {
                $this->outbox .= FrameCodec::encode(Frame::CONTROL, [], '', Frame::PONG);
            }
            $control = json_decode($frame->payload, true);
            if (\is_array($control) && !empty($control['stop'])) {
                $this->stopping = true;
            }
            // Other control payloads (a repeated pid, unknown keys) carry nothing to act on.
        }
    }

    /**
     * @param \Closure(int): string $encode
     */
    private function answer(?int $id, \Closure $encode): void
    {
        $job = $this->current;
        if ($id !== null && $id !== $job?->payload->id) {
            $this->outbox .= $encode($id);
            $this->flush();

            return;
        }
        if ($job === null) {
            throw new \LogicException(
                'no job to answer: the job from waitPayload() is answered already (the server may have given its id '
                . 'to another job since); call waitPayload() first or pass the job id'
            );
        }
        $this->current = null;
        $this->finish($job, $encode($job->payload->id));
    }
}
