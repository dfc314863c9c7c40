<?php

declare(strict_types=1);

namespace Ferry\Worker;

use Ferry\Worker\Internal\FiberRunner;
use Ferry\Worker\Internal\OutputCapture;
use Ferry\Worker\Internal\SyncCapture;
use Ferry\Worker\Relay\RelayClosedException;
use Ferry\Worker\Relay\RelayInterface;
use Ferry\Worker\Relay\StreamRelay;

/**
 * The worker side of docs/protocol.md: handshake, job frames in, answers out, stop.
 *
 * Two ways to use it:
 *  - run($handler): pipelined loop (all available jobs run, all answers in one write);
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
    /** bytes waiting for the next write (answers, pongs), so a batch leaves in one write */
    private string $outbox = '';
    private ?int $currentId = null;
    private static ?\Closure $logger = null;
    public readonly int $maxConcurrency;

    public function __construct(
        private readonly RelayInterface $relay,
        public readonly bool $fibers = false,
        int $maxConcurrency = self::DEFAULT_MAX_CONCURRENCY,
        private readonly FrameCodec $codec = new FrameCodec(),
        private ?LoopInterface $loop = null,
    ) {
        if ($maxConcurrency < 1) {
            throw new \InvalidArgumentException("maxConcurrency must be at least 1, got $maxConcurrency");
        }
        $this->maxConcurrency = $maxConcurrency;
        $this->parser = new FrameParser($codec);
        $this->jobs = new \SplQueue();
    }

    /**
     * Builds a worker from the environment the server gives its workers:
     * FERRY_RELAY (pipes | unix:///path | tcp://host:port, default pipes), FERRY_FIBERS=1,
     * FERRY_MAX_CONCURRENCY (Fiber mode, default 64), FERRY_MAX_PAYLOAD (bytes, default 64 MiB).
     */
    public static function create(?bool $fibers = null, ?int $maxConcurrency = null): self
    {
        $relay = StreamRelay::fromDsn((string) getenv('FERRY_RELAY'));
        $maxPayload = self::envInt('FERRY_MAX_PAYLOAD', FrameCodec::DEFAULT_MAX_PAYLOAD);

        return new self(
            $relay,
            $fibers ?? getenv('FERRY_FIBERS') === '1',
            $maxConcurrency ?? self::envInt('FERRY_MAX_CONCURRENCY', self::DEFAULT_MAX_CONCURRENCY),
            new FrameCodec($maxPayload),
        );
    }

    /**
     * Waits for the server's CONTROL {"pid":..} and answers with ours. Called lazily by
     * run() and waitPayload(); nothing is written to the relay before it.
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
        // Output outside a job (or from the one-at-a-time API) goes to STDERR on every relay,
        // so behaviour does not change with the transport.
        ob_start(static function (string $buffer): string {
            if ($buffer !== '') {
                fwrite(STDERR, $buffer);
            }

            return '';
        }, 1);
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
        $this->relay->write(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()])));
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
                $job = $this->prepare($frame, new SyncCapture());
                if (\is_string($job)) {
                    $this->outbox .= $job;
                    $this->flush();
                    continue;
                }
                $this->currentId = $job->payload->id;

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
     * Answers a job (by default the last one returned by waitPayload()).
     */
    public function respond(Payload|string $answer, ?int $id = null): void
    {
        $this->outbox .= $this->answerFrame($answer, $id ?? $this->currentJobId());
        $this->flush();
    }

    /**
     * Fails a job (by default the last one returned by waitPayload()) with an ERROR frame.
     */
    public function error(string $message, ?int $id = null): void
    {
        $this->outbox .= FrameCodec::encode(Frame::ERROR, [0, $id ?? $this->currentJobId()], $message);
        $this->flush();
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
     */
    public function run(callable $handler): void
    {
        $this->handshake();
        if ($this->fibers) {
            $this->loop ??= Loop::get();
            (new FiberRunner($this, $this->loop))->run($handler);

            return;
        }
        $capture = new SyncCapture();
        while (true) {
            while (($frame = $this->nextJob()) !== null) {
                $job = $this->prepare($frame, $capture);
                $this->outbox .= \is_string($job) ? $job : $this->execute($job, $handler, $capture);
            }
            $this->flush();
            if ($this->stopping || $this->closed) {
                return;
            }
            $this->receive();
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

    /**
     * @internal One read from the relay (blocks if nothing is available); queues the jobs.
     */
    public function receive(): void
    {
        try {
            $this->parser->push($this->relay->read());
        } catch (RelayClosedException) {
            $this->closed = true;

            return;
        }
        $this->dispatch($this->parser->drain());
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
     * @internal Splits a job frame into a Job, or returns an ERROR frame if it is malformed.
     */
    public function prepare(Frame $frame, OutputCapture $capture): Job|string
    {
        $contextLength = $frame->options[0] ?? 0;
        $id = $frame->options[1] ?? 0;
        $size = \strlen($frame->payload);
        if ($contextLength > $size) {
            return FrameCodec::encode(
                Frame::ERROR,
                [0, $id],
                "job $id: context length $contextLength exceeds the payload size $size"
            );
        }
        $payload = $contextLength === 0
            ? new Payload($frame->payload, '', $id)
            : new Payload(substr($frame->payload, $contextLength), substr($frame->payload, 0, $contextLength), $id);

        return new Job($payload, $capture);
    }

    /**
     * @internal Runs one job and returns its encoded answer frame.
     */
    public function execute(Job $job, callable $handler, OutputCapture $capture): string
    {
        $id = $job->payload->id;
        $capture->begin($job);
        try {
            $answer = $this->answerFrame($handler($job->payload, $job), $id);
        } catch (\Throwable $e) {
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

    /** @internal */
    public function queueAnswer(string $frame): void
    {
        $this->outbox .= $frame;
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

    private function answerFrame(mixed $answer, int $id): string
    {
        if ($answer instanceof Payload) {
            $context = $answer->context;
            $payload = $context === '' ? $answer->body : $context . $answer->body;
        } elseif (\is_string($answer) || $answer === null) {
            $context = '';
            $payload = (string) $answer;
        } else {
            $type = get_debug_type($answer);
            throw new \TypeError("job handler must return Payload, string or null, got $type");
        }
        if (\strlen($payload) > $this->codec->maxPayload) {
            return FrameCodec::encode(Frame::ERROR, [0, $id], sprintf(
                'answer of %d bytes exceeds the maximum payload of %d bytes',
                \strlen($payload),
                $this->codec->maxPayload
            ));
        }

        // The length is checked above and ids come from our own frames.
        return FrameCodec::job(\strlen($context), $id, $payload);
    }

    /**
     * @param list<Frame> $frames
     */
    private function dispatch(array $frames): void
    {
        foreach ($frames as $frame) {
            if (!$frame->has(Frame::CONTROL)) {
                $this->jobs->enqueue($frame);
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

    private function currentJobId(): int
    {
        if ($this->currentId === null) {
            throw new \LogicException('no job to answer: call waitPayload() first or pass the job id');
        }

        return $this->currentId;
    }

    private static function envInt(string $name, int $default): int
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            return $default;
        }
        if (preg_match('/\A\d+\z/', $value) !== 1) { // no ctype: workers may run with php -n
            throw new \InvalidArgumentException("$name must be a positive integer, got \"$value\"");
        }

        return (int) $value;
    }
}
