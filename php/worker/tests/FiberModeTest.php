<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * Fiber mode in real worker processes: jobs that wait on the loop overlap and answer as
 * they finish.
 */
final class FiberModeTest extends TestCase
{
    private const FIBER = __DIR__ . '/fixtures/fiber-worker.php';

    /**
     * @param list<Frame> $frames
     * @return list<int>
     */
    private static function ids(array $frames): array
    {
        return array_map(static fn (Frame $f): int => $f->options[1], $frames);
    }

    public function testSleepingJobsCompleteOutOfOrderWithTheirOwnOutput(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, '0.4') . WorkerProcess::job(2, '0.02') . WorkerProcess::job(3, '0.2'));
        $answers = $worker->readFrames(3);
        self::assertSame([2, 3, 1], self::ids($answers));
        // Each job's echoes, made on both sides of its suspension, stay with that job.
        self::assertSame(['0.02|<2::2>', '0.2|<3::3>', '0.4|<1::1>'], array_map(static fn (Frame $f) => $f->payload, $answers));
    }

    public function testWorkerSaysWhenEveryJobWaitsIfTheServerAsks(): void
    {
        // The server holds jobs for a Fiber worker busy on CPU; it must learn when all
        // the worker runs is suspended, or those jobs would wait for the suspended ones.
        $worker = new WorkerProcess(self::FIBER);
        self::assertTrue($worker->handshake(['waits' => true])['waits'] ?? false);
        $worker->send(WorkerProcess::job(1, '0.2'));
        $report = $worker->readFrames(1, 1.0)[0];
        self::assertSame(Frame::CONTROL | Frame::JSON, $report->flags);
        self::assertSame('{"waiting":true}', $report->payload);
        // Once per batch of jobs: the next job brings one more report, then the answers.
        $worker->send(WorkerProcess::job(2, '0.05'));
        $frames = $worker->readFrames(3);
        self::assertSame('{"waiting":true}', $frames[0]->payload);
        self::assertSame([2, 1], self::ids(\array_slice($frames, 1)));
    }

    public function testNoWaitReportForJobsThatCameWhileOthersWaited(): void
    {
        // The server holds jobs only for a worker it found with at most one job: jobs
        // sent while two wait were not held, so nothing needs to be said about them.
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake(['waits' => true]);
        $worker->send(WorkerProcess::job(1, '0.4') . WorkerProcess::job(2, '0.4'));
        self::assertSame('{"waiting":true}', $worker->readFrames(1, 1.0)[0]->payload);
        $worker->send(WorkerProcess::job(3, '0.05'));
        $frames = $worker->readFrames(3);
        self::assertSame([3, 1, 2], self::ids($frames));
        self::assertSame([Frame::CODEC_RAW, Frame::CODEC_RAW, Frame::CODEC_RAW], array_map(static fn (Frame $f): int => $f->flags, $frames));
    }

    public function testWaitReportForAJobWhoseFrameBeganInAnEarlierRead(): void
    {
        // Its write may have found the worker idle, so the server may be holding jobs.
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake(['waits' => true]);
        $third = WorkerProcess::job(3, '0.05');
        $worker->send(WorkerProcess::job(1, '0.4') . WorkerProcess::job(2, '0.4') . substr($third, 0, 10));
        self::assertSame('{"waiting":true}', $worker->readFrames(1, 1.0)[0]->payload);
        $worker->send(substr($third, 10));
        $frames = $worker->readFrames(4);
        self::assertSame('{"waiting":true}', $frames[0]->payload);
        self::assertSame([3, 1, 2], self::ids(\array_slice($frames, 1)));
    }

    public function testNoWaitReportsForAServerThatDidNotAsk(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        self::assertArrayNotHasKey('waits', $worker->handshake());
        $worker->send(WorkerProcess::job(1, '0.1') . WorkerProcess::job(2, '0'));
        $frames = $worker->readFrames(2);
        self::assertSame([2, 1], self::ids($frames));
        self::assertSame([Frame::CODEC_RAW, Frame::CODEC_RAW], array_map(static fn (Frame $f): int => $f->flags, $frames));
    }

    public function testMaxConcurrencyOneRunsJobsInArrivalOrder(): void
    {
        $worker = new WorkerProcess(self::FIBER, ['FERRY_MAX_CONCURRENCY' => '1']);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, '0.2') . WorkerProcess::job(2, '0.01') . WorkerProcess::job(3, '0.1'));
        self::assertSame([1, 2, 3], self::ids($worker->readFrames(3)));
    }

    public function testJobsArrivingWhileOthersWaitAreStarted(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, '0.6'));
        usleep(100000);
        $worker->send(WorkerProcess::job(2, '0'));
        self::assertSame([2, 1], self::ids($worker->readFrames(2)));
    }

    public function testFailingJobGetsAnErrorFrameOthersSucceed(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, '0.1') . WorkerProcess::job(2, 'throw') . WorkerProcess::job(3, '0'));
        $answers = $worker->readFrames(3);
        self::assertSame([3, 2, 1], self::ids($answers));
        self::assertSame(Frame::ERROR, $answers[1]->flags);
        self::assertStringStartsWith('RuntimeException: fiber job failed', $answers[1]->payload);
        self::assertSame(Frame::CODEC_RAW, $answers[2]->flags);
    }

    public function testStopWaitsForJobsInFlight(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, '0.3') . WorkerProcess::job(2, '0.1'));
        $worker->sendStop();
        self::assertSame([2, 1], self::ids($worker->readFrames(2)));
        self::assertSame('', $worker->drainUntilClosed());
        self::assertSame(0, $worker->wait());
    }

    public function testFiberSuspendedOutsideTheLoopIsFailedWhenNothingCanResumeIt(): void
    {
        $worker = new WorkerProcess(self::FIBER);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'suspend') . WorkerProcess::job(2, '0'));
        [$done, $stuck] = $worker->readFrames(2);
        self::assertSame([2], self::ids([$done]));
        self::assertSame([Frame::ERROR, [0, 1]], [$stuck->flags, $stuck->options]);
        self::assertStringContainsString('suspended its Fiber', $stuck->payload);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
    }

    public function testAStopReachesAStreamWhoseGeneratorNeverSuspends(): void
    {
        // Only the runner reads the relay in Fiber mode: a generator that blocks between
        // its parts must still give it a turn, or the STOP (the client gone, a reload)
        // would wait for the stream's end, here 20 s.
        $worker = new WorkerProcess(__DIR__ . '/fixtures/http-worker.php', ['FERRY_FIBERS' => '1']);
        $worker->handshake();
        $worker->send(Http::job(1, '/blocking-stream'));
        $first = $worker->readFrames(1)[0];
        self::assertSame(Frame::STREAM, $first->streamFlags);
        $worker->send(FrameCodec::encode(Frame::CONTROL, [0, 1], '', Frame::STOP));
        $deadline = microtime(true) + 5.0;
        do {
            $frame = $worker->readFrames(1, max(0.01, $deadline - microtime(true)))[0];
        } while ($frame->streamFlags === Frame::STREAM);
        self::assertSame(1, $frame->options[1]);
        self::assertSame('', substr($frame->payload, $frame->options[0]), 'the answer that ends a stopped stream');
        // And the worker serves on.
        $worker->send(Http::job(2, '/hello'));
        self::assertSame('Hello world', Http::answer($worker->readFrames(1)[0])['body']);
    }

    public function testHttpWorkerInFiberMode(): void
    {
        $worker = new WorkerProcess(__DIR__ . '/fixtures/http-worker.php', ['FERRY_FIBERS' => '1'], 'unix');
        $worker->handshake();
        $worker->send(Http::job(1, '/sleep?s=0.3') . Http::job(2, '/sleep?s=0.01') . Http::job(3, '/hello'));
        $answers = array_map(Http::answer(...), $worker->readFrames(3));
        self::assertSame([3, 2, 1], array_column($answers, 'id'));
        self::assertSame(['Hello world', '[0.01]slept 0.01 ', '[0.3]slept 0.3 '], array_column($answers, 'body'));
    }
}
