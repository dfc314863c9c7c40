<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * @internal An answer sent in parts (docs/protocol.md, "Streamed answers"): the parts of
 * Response::stream() and the 103s of Response::earlyHints(), for HttpWorker.
 */
final class StreamedAnswer
{
    /** the worker of the running request of a sequential worker, null between requests */
    private static ?Worker $worker = null;
    /** that request's job id */
    private static int $id = 0;
    /** @var \WeakMap<\Fiber, ?array{Worker, int}>|null the same per Fiber */
    private static ?\WeakMap $fiberRunning = null;

    /**
     * Notes the request that runs now, for earlyHints(); returns what end() takes.
     */
    public static function begin(Worker $worker, int $id): ?\Fiber
    {
        $fiber = $worker->fibers ? \Fiber::getCurrent() : null;
        if ($fiber !== null) {
            self::$fiberRunning ??= new \WeakMap();
            self::$fiberRunning[$fiber] = [$worker, $id];
        } else {
            self::$worker = $worker;
            self::$id = $id;
        }

        return $fiber;
    }

    /**
     * @internal The per-Fiber map, made now: ext/ferry's Fibers (NativeFibers) write it from C.
     *
     * @return \WeakMap<\Fiber, ?array{Worker, int}>
     */
    public static function fiberMap(): \WeakMap
    {
        return self::$fiberRunning ??= new \WeakMap();
    }

    /**
     * The ids of the requests running in Fibers now (ext/ferry's included, which have no Job).
     *
     * @return list<int>
     */
    public static function fiberIds(): array
    {
        $ids = [];
        foreach (self::$fiberRunning ?? [] as $running) {
            if ($running !== null) {
                $ids[] = $running[1];
            }
        }

        return $ids;
    }

    /** The id of a sequential worker's running request, null between requests. */
    public static function runningId(): ?int
    {
        return self::$worker === null ? null : self::$id;
    }

    public static function end(?\Fiber $fiber): void
    {
        if ($fiber !== null) {
            self::$fiberRunning[$fiber] = null; // kept for the Fiber's next job: cheaper than unset and add
        } else {
            self::$worker = null;
        }
    }

    /**
     * A 103 part for the running request; false when there is none or its client left.
     *
     * @param array<string, list<string>> $headers
     */
    public static function earlyHints(array $headers): bool
    {
        $fiber = \Fiber::getCurrent();
        $running = $fiber !== null ? (self::$fiberRunning[$fiber] ?? null) : (self::$worker === null ? null : [self::$worker, self::$id]);
        if ($running === null) {
            return false;
        }
        $context = json_encode(['status' => 103, 'headers' => $headers === [] ? new \stdClass() : $headers], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);

        return $running[0]->sendPart($running[1], $context, '');
    }

    /**
     * Sends a streamed body part by part (the head with the first one), then returns the
     * empty answer that ends it. What the application echoes meanwhile goes with the next
     * part, in order. When the client has gone, the generator is not resumed:
     * StreamStoppedException is thrown in at its yield.
     */
    public static function send(Worker $worker, Response $response, string $output, Job $job): Payload
    {
        $id = $job->payload->id;
        $head = $response->context();
        $parts = $response->getParts() ?? [];
        $iterator = $parts instanceof \Iterator ? $parts : (\is_array($parts) ? new \ArrayIterator($parts) : new \IteratorIterator($parts));
        $sent = false;
        try {
            for ($iterator->rewind(); $iterator->valid(); $iterator->next()) {
                // What the generator echoed on its way to this yield comes before it.
                $chunk = $output . $job->takeOutput() . (string) $iterator->current();
                $output = '';
                if ($chunk === '' && $sent) {
                    continue;
                }
                if (!$worker->sendPart($id, $sent ? '' : $head, $chunk)) {
                    if ($iterator instanceof \Generator) {
                        try {
                            $iterator->throw(new StreamStoppedException('the client has gone'));
                        } catch (StreamStoppedException) {
                        }
                    }
                    $job->discardOutput();

                    return new Payload('', $sent ? '' : $head);
                }
                $sent = true;
            }
        } catch (\Throwable $e) {
            if (!$sent) {
                throw $e; // nothing went out yet: an ordinary 500
            }
            // The head and some parts are out: an ERROR frame makes the server cut the
            // response short, so the client sees it incomplete rather than complete.
            $job->failed = true;
            $job->discardOutput();
            Worker::log("request $id failed while streaming: " . Worker::describe($e) . "\n" . $e->getTraceAsString());
            $worker->deliver($job, FrameCodec::encode(Frame::ERROR, [0, $id], Worker::describe($e)));

            return new Payload('', '');
        }
        $output .= $job->takeOutput();

        return $sent ? new Payload($output, '') : new Payload($output, $head);
    }
}
