<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * @internal The leak watch's replay check (pool.leak_watch_replay): finds state that one
 * request corrupts and another one reads.
 *
 * The first GET request to a listed path after warm-up is recorded as the server sent it
 * (headers and cookies included). The worker runs it again itself, twice at once (a page
 * whose two runs differ depends on time or chance, and is not replayed), then once per check
 * after other traffic, and compares the bodies. A replay's answer goes nowhere: it is never
 * written to the server, so no client sees it. Only GET requests are ever recorded.
 */
final class LeakReplay
{
    /** Bytes of each body shown around the first difference. */
    private const EXCERPT = 60;

    /** @var array<string, string> path => its serialized form in a request context, not yet recorded */
    private array $wanted = [];
    /** @var array<string, array{Payload, string}> path => the recorded request and its early body */
    private array $recorded = [];
    private ?\Closure $handler = null;
    private ?OutputCapture $capture = null;
    private bool $running = false;

    /** @param list<string> $paths */
    public function __construct(private readonly WorkerSession $session, array $paths)
    {
        foreach ($paths as $path) {
            $this->wanted[$path] = 's:4:"path";s:' . \strlen($path) . ':"' . $path . '";';
        }
    }

    /** The paths the server asked to replay (FERRY_LEAK_WATCH_REPLAY, a JSON list), or null. */
    public static function fromEnvironment(WorkerSession $session): ?self
    {
        $raw = getenv('FERRY_LEAK_WATCH_REPLAY');
        if ($raw === false || $raw === '') {
            return null;
        }
        $paths = json_decode($raw, true);
        if (!\is_array($paths) || !array_is_list($paths) || $paths === [] || array_filter($paths, 'is_string') !== $paths) {
            Worker::log('leak watch: FERRY_LEAK_WATCH_REPLAY is not a JSON list of paths, no replay check: ' . substr($raw, 0, 200));

            return null;
        }

        return new self($session, $paths);
    }

    /** Run() hands over the handler: without it (a waitPayload() loop) nothing is replayed. */
    public function serve(callable $handler, OutputCapture $capture): void
    {
        $this->handler = $handler(...);
        $this->capture = $capture;
    }

    /** Whether a replay is under way: its own end must not count as a request. */
    public function running(): bool
    {
        return $this->running;
    }

    /**
     * Records $job when it is the first GET to a listed path, and runs its early replays.
     *
     * @return bool whether anything was replayed
     */
    public function record(Job $job): bool
    {
        if ($this->wanted === [] || $this->handler === null) {
            return false;
        }
        $context = $job->payload->context;
        // Both read in the serialized context as it is: no decoding for the other requests.
        if (!str_contains($context, 's:6:"method";s:3:"GET";')) {
            return false;
        }
        foreach ($this->wanted as $path => $needle) {
            if (!str_contains($context, $needle)) {
                continue;
            }
            unset($this->wanted[$path]);
            $request = new Payload($job->payload->body, $context, $job->payload->id);
            $first = $this->run($request);
            $second = $this->run($request);
            if ($first === null || $second === null) {
                Worker::log("leak watch: GET $path failed when replayed, so it is not replayed again");
            } elseif ($first !== $second) {
                Worker::log("leak watch: GET $path gave two different bodies when replayed twice in a row (it depends on time or chance), so it is not replayed: " . self::difference($first, $second));
            } else {
                $this->recorded[$path] = [$request, $first];
            }

            return true;
        }

        return false;
    }

    /**
     * Replays every recorded request once more.
     *
     * @return array<string, string> path => how its body now differs from the early one
     */
    public function replay(): array
    {
        $differ = [];
        foreach ($this->recorded as $path => [$request, $early]) {
            $now = $this->run($request);
            if ($now !== null && $now !== $early) {
                $differ[$path] = self::difference($early, $now);
                unset($this->recorded[$path]);
            }
        }

        return $differ;
    }

    /** @return list<string> the contexts of the recorded requests, to name them among the suspects */
    public function contexts(): array
    {
        return array_map(static fn (array $r): string => $r[0]->context, array_values($this->recorded));
    }

    /** The body, or null when the handler threw. */
    private function run(Payload $request): ?string
    {
        $job = new Job(new Payload($request->body, $request->context, $request->id), $this->capture);
        $this->running = true;
        $this->capture->begin($job);
        try {
            $answer = ($this->handler)($job->payload, $job);
            $body = $answer instanceof Payload ? $answer->body : (string) $answer;
        } catch (\Throwable $e) {
            Worker::log('leak watch: a replayed request failed: ' . Worker::describe($e));
            $body = null;
        } finally {
            // What it printed besides its answer goes nowhere either.
            $this->capture->end($job);
        }
        try {
            // Its terminate hooks run, as they are part of a request (a framework resets
            // there), but the job counts as answered: finish() writes nothing.
            $job->answered = true;
            $this->session->finish($job, '');
        } finally {
            $this->running = false;
        }

        return $body;
    }

    /** Where two bodies part, with a short excerpt of each. */
    public static function difference(string $early, string $now): string
    {
        $common = min(\strlen($early), \strlen($now));
        $at = strspn($early ^ $now, "\0", 0, $common);
        $from = max(0, $at - 20);
        $excerpt = static function (string $body) use ($from): string {
            $text = substr($body, $from, self::EXCERPT);
            $text = (string) preg_replace('/[\x00-\x1f\x7f]/', ' ', $text);

            return '"' . ($from > 0 ? '…' : '') . $text . ($from + self::EXCERPT < \strlen($body) ? '…' : '') . '"';
        };

        return sprintf('the body differs from byte %d (%d bytes early, %d now): early %s, now %s', $at, \strlen($early), \strlen($now), $excerpt($early), $excerpt($now));
    }
}
