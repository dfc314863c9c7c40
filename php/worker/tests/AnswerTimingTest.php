<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * When answers leave a real worker: each as soon as its job is done, before the terminate
 * hooks, never twice. Ordering is proved with events, not durations: a job or hook that
 * must still be running waits for a file the test creates only after it saw the answer.
 */
final class AnswerTimingTest extends TestCase
{
    private const SDK = __DIR__ . '/fixtures/sdk-worker.php';

    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/ferry-timing-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        array_map('unlink', glob($this->dir . '/*') ?: []);
        rmdir($this->dir);
    }

    /**
     * @return iterable<string, array{string}>
     */
    public static function relays(): iterable
    {
        yield 'fds' => ['fds'];
        yield 'legacy pipes' => ['pipes'];
    }

    /**
     * @dataProvider relays
     */
    public function testAnswerLeavesBeforeTheNextJobOfTheSameBatchRuns(string $relay): void
    {
        $worker = new WorkerProcess(self::SDK, [], $relay);
        $worker->handshake();
        $signal = "{$this->dir}/go";
        // One write, so both jobs arrive in the same read: the slow one blocks until the
        // test has seen the fast one's answer.
        $worker->send(WorkerProcess::job(1, 'echo:fast') . WorkerProcess::job(2, "wait:$signal"));
        $fast = $worker->readFrames(1, 5.0)[0];
        self::assertSame([[0, 1], 'fast'], [$fast->options, $fast->payload]);
        touch($signal);
        $slow = $worker->readFrames(1)[0];
        self::assertSame([[0, 2], 'waited'], [$slow->options, $slow->payload]);
    }

    /**
     * The test above holds even if an answer waits until the next job starts. Here no job
     * starts after the fast one: the only other job of the batch began first and stays
     * busy (suspended in its Fiber) until the test has read the fast job's answer, so that
     * answer must leave as soon as its own job is done.
     *
     * @dataProvider relays
     */
    public function testAnswerLeavesWhileAnEarlierJobOfTheSameBatchIsStillBusy(string $relay): void
    {
        $worker = new WorkerProcess(self::SDK, ['FERRY_FIBERS' => '1', 'FERRY_MAX_CONCURRENCY' => '2'], $relay);
        $worker->handshake();
        $signal = "{$this->dir}/long-may-finish";
        $worker->send(WorkerProcess::job(1, "wait:$signal") . WorkerProcess::job(2, 'echo:fast'));
        $fast = $worker->readFrames(1, 5.0)[0];
        self::assertSame([[0, 2], 'fast'], [$fast->options, $fast->payload]);
        touch($signal);
        $long = $worker->readFrames(1, 5.0)[0];
        self::assertSame([[0, 1], 'waited'], [$long->options, $long->payload]);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
    }

    /**
     * @return iterable<string, array{array<string, string>}>
     */
    public static function modes(): iterable
    {
        yield 'sequential' => [[]];
        yield 'fibers' => [['FERRY_FIBERS' => '1']];
    }

    /**
     * @dataProvider modes
     * @param array<string, string> $env
     */
    public function testTerminateHookRunsAfterTheAnswerAndBeforeTheNextJob(array $env): void
    {
        $worker = new WorkerProcess(self::SDK, $env + ['FERRY_MAX_CONCURRENCY' => '1'], 'fds');
        $worker->handshake();
        $signal = "{$this->dir}/hook-may-finish";
        $worker->send(WorkerProcess::job(1, "terminate:$signal") . WorkerProcess::job(2, "exists:$signal.done"));
        // The hook is still waiting for the signal, so this answer did not wait for it.
        $answer = $worker->readFrames(1, 5.0)[0];
        // FINISHING (0x10): hooks run next, the worker is busy until its {"finished":true}.
        self::assertSame([[0, 1], 'answered first', 0x10], [$answer->options, $answer->payload, $answer->streamFlags]);
        self::assertFileDoesNotExist("$signal.done");
        touch($signal);
        self::assertFinished($worker->readFrames(1)[0]);
        // Job 2 only ran once the hook was done.
        $next = $worker->readFrames(1)[0];
        self::assertSame('yes', $next->payload);
        self::assertSame(0, $next->streamFlags & Frame::FINISHING, 'no hook follows job 2');
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
        self::assertStringContainsString("terminate hook output\n", $worker->stderr(), 'hook output is log output');
    }

    /**
     * @dataProvider modes
     * @param array<string, string> $env
     */
    public function testFailingTerminateHookIsLoggedAndTheWorkerGoesOn(array $env): void
    {
        $worker = new WorkerProcess(self::SDK, $env, 'fds');
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'terminate-throw'));
        self::assertSame('answered', $worker->readFrames(1)[0]->payload);
        self::assertFinished($worker->readFrames(1)[0]);
        $worker->send(WorkerProcess::job(2, 'echo:alive'));
        self::assertSame('alive', $worker->readFrames(1)[0]->payload);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
        self::assertStringContainsString('terminate hook of job 1 failed: RuntimeException: hook exploded', $worker->stderr());
        self::assertStringContainsString('second hook ran', $worker->stderr());
    }

    public function testWorkerWideTerminateHookRunsAfterEveryJob(): void
    {
        $file = "{$this->dir}/terminated";
        $worker = new WorkerProcess(self::SDK, ['SDK_TERMINATE_FILE' => $file], 'fds');
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'echo:a') . WorkerProcess::job(2, 'echo:b'));
        $frames = $worker->readFrames(4);
        self::assertSame([[0, 1], 0x10, [0, 2], 0x10], [$frames[0]->options, $frames[0]->streamFlags, $frames[2]->options, $frames[2]->streamFlags]);
        self::assertFinished($frames[1]);
        self::assertFinished($frames[3]);
        $worker->send(WorkerProcess::job(3, "read:$file"));
        self::assertSame("1\n2\n", $worker->readFrames(1)[0]->payload);
    }

    private static function assertFinished(Frame $frame): void
    {
        self::assertSame([Frame::CONTROL, [], '{"finished":true}'], [$frame->flags, $frame->options, $frame->payload]);
    }

    /**
     * @dataProvider relays
     */
    public function testSecondAnswerToTheSameJobIsRefused(string $relay): void
    {
        $worker = new WorkerProcess(__DIR__ . '/fixtures/respond-twice-worker.php', [], $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'a'));
        $first = $worker->readFrames(1)[0];
        self::assertSame([Frame::CODEC_RAW, [0, 1], 'first:a'], [$first->flags, $first->options, $first->payload]);
        $worker->send(WorkerProcess::job(2, 'b'));
        // Nothing else was written for job 1: the next frame is job 2's answer.
        $next = $worker->readFrames(1)[0];
        self::assertSame([Frame::CODEC_RAW, [0, 2], 'first:b'], [$next->flags, $next->options, $next->payload]);
        $worker->sendStop();
        self::assertSame('', $worker->drainUntilClosed());
        self::assertSame(0, $worker->wait());
        self::assertStringContainsString('respond refused: no job to answer', $worker->stderr());
        self::assertStringContainsString('error refused', $worker->stderr());
    }
}
