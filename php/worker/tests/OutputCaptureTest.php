<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Tests\Support\ExtIni;
use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * Application code that fights output buffering (closing every buffer, flushing, cleaning)
 * in a real worker: what it echoes stays with its job and nothing reaches the relay.
 * Each answer is what the job captured, as HttpWorker puts it in the response body.
 */
final class OutputCaptureTest extends TestCase
{
    private const SDK = __DIR__ . '/fixtures/sdk-worker.php';

    /**
     * @return iterable<string, array{string, array<string, string>}>
     */
    public static function workers(): iterable
    {
        yield 'fds relay' => ['fds', []];
        yield 'legacy pipes relay' => ['pipes', []];
        yield 'fds relay, fibers' => ['fds', ['FERRY_FIBERS' => '1']];
    }

    /**
     * @dataProvider workers
     * @param array<string, string> $env
     */
    public function testClosingEveryBufferCannotLoseLaterOutput(string $relay, array $env): void
    {
        $worker = new WorkerProcess(self::SDK, $env, $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'ob-end-clean-all') . WorkerProcess::job(2, 'echo:next'));
        [$first, $second] = $worker->readFrames(2);
        self::assertSame([Frame::CODEC_RAW, 'page'], [$first->flags, $first->payload]);
        self::assertSame('next', $second->payload);
        $this->assertCleanExit($worker);
    }

    /**
     * @dataProvider workers
     * @param array<string, string> $env
     */
    public function testBufferFunctionsAimedAtTheWorkersBufferDoWhatTheyAsk(string $relay, array $env): void
    {
        $worker = new WorkerProcess(self::SDK, $env, $relay);
        $worker->handshake();
        $worker->send(
            WorkerProcess::job(1, 'ob-get-clean') . WorkerProcess::job(2, 'ob-end-flush-all') . WorkerProcess::job(3, 'ob-flush')
        );
        $answers = array_map(static fn (Frame $f): string => $f->payload, $worker->readFrames(3));
        // ob_get_clean() returns the text and drops it (in Fiber mode the text is never in
        // PHP's buffer, so it returns nothing and the text stays); ob_end_flush() keeps it;
        // ob_flush()ed text stays in the body even when ob_clean() follows, as it was "sent".
        $gotClean = $env === [] ? 'got[mine]' : 'minegot[]';
        self::assertSame([$gotClean, 'inner;after', 'a;c'], $answers);
        $this->assertCleanExit($worker);
        self::assertStringNotContainsString('Failed to', $worker->log(), 'the refusal notices stay out of the log');
    }

    /**
     * @dataProvider workers
     * @param array<string, string> $env
     */
    public function testEndlessCloseLoopFailsOnlyThatJob(string $relay, array $env): void
    {
        $worker = new WorkerProcess(self::SDK, $env, $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'ob-level-loop') . WorkerProcess::job(2, 'echo:still serving'));
        [$error, $next] = $worker->readFrames(2);
        self::assertSame([Frame::ERROR, [0, 1]], [$error->flags, $error->options]);
        self::assertStringContainsString('output buffer loop', $error->payload);
        // Pure PHP cannot give a request a removable first buffer: the message says what can.
        self::assertStringContainsString('load ext/ferry (pool.php.extension), with which a request starts with one removable buffer', $error->payload);
        self::assertSame('still serving', $next->payload);
        $this->assertCleanExit($worker);
    }

    /**
     * With ext/ferry a sequential job starts as an FPM request does, with one removable
     * default buffer: the close loop discards what came before it and ends, and the next
     * job starts at level 1 again with nothing of this one, nor of what a hook echoed
     * between them (that is the log's).
     */
    public function testCloseLoopEndsWithTheExtension(): void
    {
        // ext/ferry/memcheck_sdk.sh runs it under valgrind, with a longer FERRY_TEST_TIMEOUT.
        $timeout = (float) (getenv('FERRY_TEST_TIMEOUT') ?: 10);
        $worker = new WorkerProcess(self::SDK, ['PHP_INI_SCAN_DIR' => ExtIni::scanDir()], 'fds');
        $worker->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()])));
        self::assertSame(Frame::CONTROL | Frame::JSON, $worker->readFrames(1, $timeout)[0]->flags);
        $worker->send(
            WorkerProcess::job(1, 'ob-level-loop') . WorkerProcess::job(2, 'echo-in-terminate')
            . WorkerProcess::job(3, 'ob-state') . WorkerProcess::job(4, 'ob-get-clean')
        );
        $answers = array_map(static fn (Frame $f): string => $f->payload, $worker->readFrames(5, $timeout));
        // Job 2's hook ends with the report that lets the server route to this worker again.
        self::assertSame(['page', 'answered', Frame::FINISHED, '1 0', 'got[mine]'], $answers);
        $this->assertCleanExit($worker);
        self::assertStringContainsString('echoed by a terminate hook in a buffer left open', $worker->log());
    }

    /**
     * @dataProvider workers
     * @param array<string, string> $env
     */
    public function testHttpResponseBodyKeepsFlushedAndPostResetOutput(string $relay, array $env): void
    {
        $worker = new WorkerProcess(__DIR__ . '/fixtures/http-output-worker.php', $env, $relay);
        $worker->handshake();
        $worker->send(Http::job(1, '/flush') . Http::job(2, '/reset'));
        $answers = array_map(Http::answer(...), $worker->readFrames(2));
        usort($answers, static fn (array $a, array $b): int => $a['id'] <=> $b['id']);
        self::assertSame([200, 'flushed;echoed;returned'], [$answers[0]['status'], $answers[0]['body']]);
        self::assertSame([200, 'error page;returned'], [$answers[1]['status'], $answers[1]['body']]);
        $this->assertCleanExit($worker);
    }

    private function assertCleanExit(WorkerProcess $worker): void
    {
        $worker->sendStop();
        self::assertSame('', $worker->drainUntilClosed(), 'bytes after the last answer');
        self::assertSame(0, $worker->wait());
    }
}
