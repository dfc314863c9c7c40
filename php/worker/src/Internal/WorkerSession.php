<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameParser;
use Ferry\Worker\Internal\Fork\Zygote;
use Ferry\Worker\Internal\Leak\LeakWatch;
use Ferry\Worker\Internal\Native\DirectFibers;
use Ferry\Worker\Internal\Native\NativeLoop;
use Ferry\Worker\Internal\Output\FiberCapture;
use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Internal\Output\SapiCapture;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\LoopInterface;
use Ferry\Worker\Payload;
use Ferry\Worker\ProtocolException;
use Ferry\Worker\Relay\RelayClosedException;
use Ferry\Worker\Relay\RelayInterface;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;

/**
 * @internal One worker's conversation with the server (docs/protocol.md): the state every
 * loop shares (the PHP loops, FiberRunner, ext/ferry's loops) and the frame engine
 * (handshake, receive and dispatch, answers and the outbox, streamed parts).
 *
 * ext/ferry binds to this class and to nothing else of the worker's state: the public
 * properties under "the contract" and the public methods runResetHooks() and
 * afterNativeAnswer() (ext/ferry/README.md, "Worker contract"). It refuses a class whose
 * CONTRACT_VERSION is not its own; change any of them and the version goes up, with
 * FERRY_CONTRACT_VERSION in ext/ferry/ferry_contract.h.
 *
 * Past 400 lines on purpose: the contract is this one class, so the state C reads and the
 * engine that keeps it consistent stay side by side; what could leave did (StreamParts,
 * SequentialRunner, FatalAnswer, JobFrames).
 */
final class WorkerSession
{
    public const CONTRACT_VERSION = 2;

    // The contract: read and written in place by ext/ferry.
    public bool $stopping = false;
    public bool $closed = false;
    /** frames waiting for the next write (pongs, errors for malformed jobs, answers) */
    public string $outbox = '';
    /** @var array<int, bool> jobs that sent answer parts => whether the server stopped them */
    public array $streams = [];
    /** @var array<int, string> jobs the server gave up on => why, "exec_ttl" or "client" (a STOP frame for a job not streaming; FiberRunner) */
    public array $cancelled = [];
    /** @var list<\Closure> Worker::onTerminate()'s hooks */
    public array $terminateHooks = [];
    /** jobs came since the server was last told that every job waits (Fiber mode) */
    public bool $jobsSinceWaiting = false;
    /** both sides agreed in the handshake that this Fiber worker reports its waits */
    public bool $reportsWaits = false;
    /** the id of a sequential worker's running request, null between requests (Response::earlyHints()) */
    public ?int $running = null;
    /** @var \WeakMap<\Fiber, ?int> the same per Fiber, null between its jobs */
    public readonly \WeakMap $fiberRunning;
    /**
     * @var array<string, array<mixed>> HttpWorker's: $_SERVER, $_GET, $_POST, $_COOKIE, $_FILES
     * and $_REQUEST as the bootstrap left them, put back at every request start
     */
    public array $kept = [];
    /** @var list<\Closure> HttpWorker::onReset()'s hooks, run after every request */
    public array $resetHooks = [];
    public readonly OutputCapture $capture;
    /** $capture leaves the job's output to ext/ferry's SAPI hooks (SapiCapture): only its $job is the loop's to set */
    public readonly bool $sapiOutput;
    /** the largest frame payload either side may send */
    public readonly int $maxPayload;
    /** ext/ferry's loop's read buffer, shared: the bytes of the relay it has not served are [offset, end) */
    public ?string $readAhead = null;
    public int $readAheadOffset = 0;
    public int $readAheadEnd = 0;
    /** @var array{int, string, string, mixed, ?array<mixed>, ?\Throwable}|null the job ext/ferry's loop returned (NativeLoop::RESUME) */
    public ?array $handed = null;
    // End of the contract.

    public readonly FrameParser $parser;
    /** the parts of streamed answers */
    public readonly StreamParts $parts;
    private bool $started = false;
    /** the process-wide part of the handshake ran (output capture, fatal answers) */
    private bool $setUp = false;
    /** a refork's socket (pool.refork_after): this worker forks the generation's next mold */
    public ?string $moldSocket = null;
    /** direct mode (Native\DirectLoop): the worker serves HTTP itself, and says so in the handshake */
    public bool $direct = false;
    /** where the answers of the direct-mode job being finished go instead of the relay (DirectLoop) */
    public ?\Closure $directSink = null;
    /** @var \SplQueue<Frame> jobs received but not started */
    public readonly \SplQueue $jobs;
    /** null unless the server runs with pool.leak_watch */
    public readonly ?LeakWatch $leaks;
    /** the control frame {"finished":true}, the same after every job with terminate hooks */
    private static ?string $finished = null;

    public function __construct(
        public readonly RelayInterface $relay,
        public readonly bool $fibers,
        public readonly int $maxConcurrency,
        public readonly FrameCodec $codec,
        private readonly ?string $token,
        public ?LoopInterface $loop = null,
    ) {
        $this->maxPayload = $codec->maxPayload;
        $this->parser = new FrameParser($codec);
        $this->jobs = new \SplQueue();
        $this->fiberRunning = new \WeakMap();
        $this->parts = new StreamParts($this);
        // Fibers interleave jobs, and PHP has one output stack: each job needs a buffer of its own.
        $this->capture = $fibers ? new FiberCapture() : (SapiCapture::available() ? new SapiCapture() : new SyncCapture());
        $this->sapiOutput = $this->capture instanceof SapiCapture;
        $this->leaks = LeakWatch::fromEnvironment($this);
    }

    /**
     * Waits for the server's CONTROL {"pid":..} and answers with ours (and the relay token).
     * Nothing is written to the relay before it.
     */
    public function handshake(): void
    {
        if ($this->started) {
            return;
        }
        $this->started = true;
        if ($this->relay instanceof StreamRelay && ($zygote = $this->relay->zygoteSocket()) !== null) {
            // pool.boot: fork. Everything up to here was the boot, shared by every worker;
            // this returns in each forked worker, with its own relay.
            Zygote::serve($this->relay, $zygote, $this->token);
        }
        if (!$this->setUp) {
            $this->setUp();
        }
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
        if ($this->direct) {
            $answer['direct'] = true;
        }
        if ($this->fibers && !empty($hello['waits'])) {
            // We say when every job we run is waiting, so the server may hold jobs while we are busy.
            $this->reportsWaits = true;
            $answer['waits'] = true;
        }
        $this->relay->write(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode($answer)));
        $this->dispatch($this->parser->drain());
    }

    /** What a worker process sets up once, before its first handshake (a reborn worker keeps it). */
    private function setUp(): void
    {
        $this->setUp = true;
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
    }

    /**
     * In a mold (pool.refork_after): forgets the worker's relay and conversation, so that the
     * workers it forks start theirs with the handshake, on relays of their own.
     */
    public function reborn(): void
    {
        $this->relay->close();
        $this->started = $this->stopping = $this->closed = false;
        $this->outbox = '';
        $this->streams = [];
        $this->running = null;
        $this->jobsSinceWaiting = false;
        $this->readAhead = null;
        $this->readAheadOffset = $this->readAheadEnd = 0;
        $this->handed = null;
        $this->moldSocket = null;
        $this->parser->take();
        while (!$this->jobs->isEmpty()) {
            $this->jobs->dequeue();
        }
    }

    /** @internal the relay token, which a mold presents as the zygote it replaces did */
    public function token(): ?string
    {
        return $this->token;
    }

    public function started(): bool
    {
        return $this->started;
    }

    public function isStopping(): bool
    {
        return $this->stopping || $this->closed;
    }

    /** Tells the server this worker is leaving (CONTROL {"stop":true}), once. */
    public function stop(): void
    {
        if (!$this->stopping && !$this->closed && $this->started) {
            $this->outbox .= FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"stop":true}');
            $this->flush();
        }
        $this->stopping = true;
    }

    /** One read from the relay (blocks if nothing is available); queues the jobs. */
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

    /**
     * Takes back what ext/ferry's loop read and did not serve (the read-ahead, or $rest from
     * the Fiber-mode loop), and what it says of the relay ($status, NativeLoop's constants);
     * false when it read nothing for us.
     */
    public function handBack(int $status, string $rest = ''): bool
    {
        if ($status === NativeLoop::CLOSED) {
            $this->closed = true;
        }
        $rest = $this->takeReadAhead() . $rest;
        if ($rest !== '') {
            $this->parser->push($rest);
            $this->dispatch($this->parser->drain());
        }

        return $status !== NativeLoop::READ_HERE;
    }

    /** What ext/ferry's loop read ahead and did not serve, the PHP loop's from now on (its buffer stays). */
    public function takeReadAhead(): string
    {
        $ahead = $this->readAhead;
        if ($ahead === null || $this->readAheadOffset >= $this->readAheadEnd) {
            return '';
        }
        $from = $this->readAheadOffset;
        $this->readAheadOffset = $this->readAheadEnd;

        return substr($ahead, $from, $this->readAheadEnd - $from);
    }

    /** Whether part of a frame has been read and the rest has not. */
    public function partialFrame(): bool
    {
        return $this->parser->buffered() > 0;
    }

    public function nextJob(): ?Frame
    {
        return $this->jobs->isEmpty() ? null : $this->jobs->dequeue();
    }

    public function hasQueuedJobs(): bool
    {
        return !$this->jobs->isEmpty();
    }

    /** Runs one job and returns its encoded answer frame. */
    public function execute(Job $job, callable $handler, OutputCapture $capture): string
    {
        $id = $job->payload->id;
        $capture->begin($job);
        try {
            $answer = JobFrames::answer($handler($job->payload, $job), $id, $this->codec->maxPayload);
        } catch (\Throwable $e) {
            $job->failed = true;
            Worker::log(sprintf("job %d failed: %s\n%s", $id, Worker::describe($e), $e->getTraceAsString()));
            $answer = FrameCodec::encode(Frame::ERROR, [0, $id], Worker::describe($e));
        } finally {
            $rest = $capture->end($job);
            if ($rest !== '') {
                fwrite(STDERR, $rest);
            }
        }

        return $answer;
    }

    /**
     * ext/ferry's loop ran job $job's handler and HttpWorker::resume() made its answer (NativeLoop,
     * NativeFibers); what execute() and finish() do after the handler.
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

    /** Writes the job's answer now (unless it was answered already), then runs its terminate hooks. */
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
        $finishing = !$job->answered && \strlen($answer) >= 12 && !($this->direct && DirectFibers::owns($job->payload->id));
        if ($finishing) {
            $answer[10] = \chr(\ord($answer[10]) | Frame::FINISHING);
        }
        $this->deliver($job, $answer);
        $this->afterAnswer($job, $finishing);
    }

    /** The contract: the terminate hooks of job $id, whose answer ext/ferry's loop wrote flagged FINISHING. */
    public function afterNativeAnswer(int $id, string $context, string $body): void
    {
        // A direct-mode answer went to its client, not to the server, which has nothing to wait for.
        $this->afterAnswer(new Job(new Payload($body, $context, $id), $this->capture), !$this->direct);
    }

    /**
     * Runs the terminate hooks of a job whose answer has been written, then tells the server
     * they are done if that answer said they would run ($finishing: it carried FINISHING).
     */
    public function afterAnswer(Job $job, bool $finishing): void
    {
        $hooks = $this->terminateHooks === [] ? $job->terminateHooks : [...$job->terminateHooks, ...$this->terminateHooks];
        $job->terminateHooks = [];
        foreach ($hooks as $hook) {
            try {
                $hook($job);
            } catch (\Throwable $e) {
                Worker::log(sprintf("terminate hook of job %d failed: %s\n%s", $job->payload->id, Worker::describe($e), $e->getTraceAsString()));
            }
        }
        $this->leaks?->finished($job);
        if ($finishing) {
            $this->outbox .= self::$finished ??= FrameCodec::encode(Frame::CONTROL, [], Frame::FINISHED);
            $this->flush();
        }
    }

    /**
     * The contract: HttpWorker's reset hooks, after every request. A hook that throws
     * leaves the process in an unknown state: it is logged and the worker stops after
     * answering, so the server starts a fresh one.
     */
    public function runResetHooks(): void
    {
        foreach ($this->resetHooks as $hook) {
            try {
                $hook();
            } catch (\Throwable $e) {
                Worker::log('reset hook failed, stopping this worker: ' . Worker::describe($e));
                $this->stop();
            }
        }
    }

    /** Writes the job's answer with whatever else is queued, once per job. */
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
        if ($this->directSink !== null) {
            ($this->directSink)($bytes);
        } elseif ($bytes !== '' && !$this->closed) {
            $this->relay->write($bytes);
        }
    }

    /** Writes everything queued for the server in one write. */
    public function flush(): void
    {
        if ($this->outbox === '') {
            return;
        }
        $bytes = $this->outbox;
        $this->outbox = '';
        if ($this->directSink !== null) {
            ($this->directSink)($bytes);
        } elseif (!$this->closed) {
            $this->relay->write($bytes);
        }
    }

    /** Queues a frame for the next write. */
    public function queue(string $frame): void
    {
        $this->outbox .= $frame;
    }

    /**
     * @param list<Frame> $frames
     */
    public function dispatch(array $frames): void
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
                } elseif ($id !== 0 && $frame->payload !== '') {
                    // A cancel: a Fiber worker's job past exec_ttl, or whose client left (the
                    // payload says which). FiberRunner throws into it; a late one names no
                    // job and is forgotten there. A late stream STOP (no payload) is dropped
                    // here, or a sequential worker, which never empties this, would keep it.
                    $this->cancelled[$id] = $frame->payload === 'client' ? 'client' : 'exec_ttl';
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
            if (\is_array($control) && \is_string($control['mold']['socket'] ?? null)) {
                $this->moldSocket = $control['mold']['socket'];
            }
            // Other control payloads (a repeated pid, unknown keys) carry nothing to act on.
        }
    }
}
