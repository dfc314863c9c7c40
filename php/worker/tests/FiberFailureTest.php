<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * Fiber mode in real worker processes when a job misbehaves: an exception thrown by a
 * loop callback, or a Fiber suspended where the loop cannot resume it. Only that job
 * fails; the jobs in flight beside it are answered and the worker keeps serving.
 */
final class FiberFailureTest extends TestCase
{
    private const SDK = __DIR__ . '/fixtures/sdk-worker.php';

    /**
     * @param list<Frame> $frames
     * @return array<int, Frame> by job id
     */
    private static function byId(array $frames): array
    {
        $byId = [];
        foreach ($frames as $frame) {
            $byId[$frame->options[1]] = $frame;
        }
        ksort($byId);

        return $byId;
    }

    private static function worker(array $env = []): WorkerProcess
    {
        $worker = new WorkerProcess(self::SDK, $env + ['FERRY_FIBERS' => '1'], 'fds');
        $worker->handshake();

        return $worker;
    }

    /**
     * @return iterable<string, array{string, string}>
     */
    public static function failingCallbacks(): iterable
    {
        yield 'timer callback' => ['timer-throw', 'RuntimeException: timer failed'];
        yield 'callback deferred by a timer callback' => ['defer-throw', 'RuntimeException: deferred failure'];
    }

    /**
     * @dataProvider failingCallbacks
     */
    public function testCallbackExceptionFailsOnlyTheJobThatScheduledIt(string $command, string $error): void
    {
        $worker = self::worker();
        $worker->send(
            WorkerProcess::job(1, 'sleep:0.2') . WorkerProcess::job(2, $command) . WorkerProcess::job(3, 'sleep:0.05')
        );
        $answers = self::byId($worker->readFrames(3));
        self::assertSame([Frame::CODEC_RAW, 'slept 0.2'], [$answers[1]->flags, $answers[1]->payload]);
        self::assertSame(Frame::ERROR, $answers[2]->flags);
        self::assertStringStartsWith($error, $answers[2]->payload);
        self::assertSame([Frame::CODEC_RAW, 'slept 0.05'], [$answers[3]->flags, $answers[3]->payload]);
        $worker->send(WorkerProcess::job(4, 'echo:alive'));
        self::assertSame('alive', $worker->readFrames(1)[0]->payload);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
    }

    public function testCallbackOfNoJobIsLoggedAndTheWorkerGoesOn(): void
    {
        $worker = self::worker(['SDK_BOOT_TIMER' => '1']);
        $worker->send(WorkerProcess::job(1, 'sleep:0.01') . WorkerProcess::job(2, 'echo:x'));
        $answers = self::byId($worker->readFrames(2));
        self::assertSame(['slept 0.01', 'x'], [$answers[1]->payload, $answers[2]->payload]);
        self::assertStringContainsString('event loop callback failed: RuntimeException: boot timer failed', $worker->stderr());
    }

    public function testFiberSuspendedOutsideTheLoopIsFailedAtOnce(): void
    {
        $worker = self::worker();
        // No stop, no other job: the worker must notice by itself.
        $worker->send(WorkerProcess::job(1, 'suspend-cleanup'));
        $stuck = $worker->readFrames(1, 5.0)[0];
        self::assertSame([Frame::ERROR, [0, 1]], [$stuck->flags, $stuck->options]);
        self::assertStringContainsString("job 1 suspended its Fiber outside the worker's event loop", $stuck->payload);
        self::assertStringContainsString('cleanup of job 1 ran', $worker->stderr(), 'the Fiber was unwound');
        $worker->send(WorkerProcess::job(2, 'echo:next'));
        self::assertSame('next', $worker->readFrames(1)[0]->payload);
    }

    public function testStuckFiberIsFailedOnceTheLoopHasNothingElseToRun(): void
    {
        $worker = self::worker();
        $worker->send(WorkerProcess::job(1, 'suspend') . WorkerProcess::job(2, 'sleep:0.05'));
        [$first, $second] = $worker->readFrames(2, 5.0);
        self::assertSame([[0, 2], 'slept 0.05'], [$first->options, $first->payload]);
        self::assertSame([Frame::ERROR, [0, 1]], [$second->flags, $second->options]);
    }

    public function testStuckFibersFreeTheirSlots(): void
    {
        $worker = self::worker(['FERRY_MAX_CONCURRENCY' => '2']);
        $worker->send(WorkerProcess::job(1, 'suspend') . WorkerProcess::job(2, 'suspend') . WorkerProcess::job(3, 'echo:third'));
        $answers = self::byId($worker->readFrames(3, 5.0));
        self::assertSame([Frame::ERROR, Frame::ERROR], [$answers[1]->flags, $answers[2]->flags]);
        self::assertSame('third', $answers[3]->payload);
    }
}
