<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * @internal An answer sent in parts (docs/protocol.md, "Streamed answers"): the parts of
 * Response::stream() and the 103s of Response::earlyHints(), for HttpWorker.
 */
final class StreamedAnswer
{
    /**
     * the session whose request runs (or ran last): Response::earlyHints() is static, and
     * the request's id is the session's ($running, or $fiberRunning in Fiber mode)
     */
    private static ?WorkerSession $session = null;

    /**
     * Notes the request that runs now, for earlyHints(); returns what end() takes.
     */
    public static function begin(WorkerSession $session, int $id): ?\Fiber
    {
        self::$session = $session;
        $fiber = $session->fibers ? \Fiber::getCurrent() : null;
        if ($fiber !== null) {
            $session->fiberRunning[$fiber] = $id;
        } else {
            $session->running = $id;
        }

        return $fiber;
    }

    /** ext/ferry's loops note each request in $session themselves: earlyHints() looks there. */
    public static function serving(WorkerSession $session): void
    {
        self::$session = $session;
    }

    public static function end(WorkerSession $session, ?\Fiber $fiber): void
    {
        if ($fiber !== null) {
            $session->fiberRunning[$fiber] = null; // kept for the Fiber's next job: cheaper than unset and add
        } else {
            $session->running = null;
        }
    }

    /**
     * A 103 part for the running request; false when there is none or its client left.
     *
     * @param array<string, list<string>> $headers
     */
    public static function earlyHints(array $headers): bool
    {
        $session = self::$session;
        if ($session === null) {
            return false;
        }
        $fiber = \Fiber::getCurrent();
        $id = $fiber !== null ? ($session->fiberRunning[$fiber] ?? null) : $session->running;
        if ($id === null) {
            return false;
        }
        $context = json_encode(['status' => 103, 'headers' => $headers === [] ? new \stdClass() : $headers], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);

        return $session->parts->send($id, $context, '');
    }

    /**
     * Sends a streamed body part by part (the head with the first one), then returns the
     * empty answer that ends it. What the application echoes meanwhile goes with the next
     * part, in order. When the client has gone, the generator is not resumed:
     * StreamStoppedException is thrown in at its yield.
     */
    public static function send(WorkerSession $session, Response $response, string $output, Job $job): Payload
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
                if (!$session->parts->send($id, $sent ? '' : $head, $chunk)) {
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
            $session->deliver($job, FrameCodec::encode(Frame::ERROR, [0, $id], Worker::describe($e)));

            return new Payload('', '');
        }
        $output .= $job->takeOutput();

        return $sent ? new Payload($output, '') : new Payload($output, $head);
    }
}
