<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\Internal\Fiber\FiberPool;
use Ferry\Worker\Internal\Fiber\Suspension;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Loop;
use Ferry\Worker\Payload;
use Ferry\Worker\Tests\Support\WorkerProcess;
use Ferry\Worker\Worker;
use PHPUnit\Framework\TestCase;

/**
 * Fiber mode reuses a Fiber for job after job (issue 20): in real worker processes, Fibers
 * are reused, nothing a job left behind (a timer, a stale wake-up, a callback's exception,
 * a Future settling late, its output, error_reporting) reaches the next job in the same
 * Fiber, and a Fiber whose job failed is not reused. Then the pool itself, in process.
 */
final class FiberPoolTest extends TestCase
{
    private const WORKER = __DIR__ . '/fixtures/fiber-pool-worker.php';

    private static function worker(array $env = []): WorkerProcess
    {
        $worker = new WorkerProcess(self::WORKER, $env, 'fds');
        $worker->handshake();

        return $worker;
    }

    /**
     * @return list<string> the answers' payloads in job id order
     */
    private static function ask(WorkerProcess $worker, string ...$bodies): array
    {
        static $id = 0;
        $first = $id + 1;
        $batch = '';
        foreach ($bodies as $body) {
            $batch .= WorkerProcess::job(++$id, $body);
        }
        $worker->send($batch);
        $byId = [];
        foreach ($worker->readFrames(\count($bodies)) as $frame) {
            $byId[$frame->options[1] - $first] = ($frame->flags & Frame::ERROR) !== 0 ? 'ERROR ' . $frame->payload : $frame->payload;
        }
        ksort($byId);

        return array_values($byId);
    }

    public function testOneFiberServesJobAfterJob(): void
    {
        $worker = self::worker();
        for ($i = 0; $i < 5; $i++) {
            self::assertSame(['f1|'], self::ask($worker, 'id'));
        }
        self::assertSame(array_fill(0, 20, 'f1|'), self::ask($worker, ...array_fill(0, 20, 'id')), 'pipelined');
    }

    public function testWithoutReuseEveryJobGetsANewFiber(): void
    {
        // pool.fiber_reuse: false, for apps that keep request state keyed by Fiber.
        $worker = self::worker(['FERRY_FIBER_REUSE' => '0']);
        self::assertSame(['f1|'], self::ask($worker, 'id'));
        self::assertSame(['f2|', 'f3|', 'f4|'], self::ask($worker, 'id', 'id', 'id'));
    }

    public function testConcurrentJobsHaveFibersOfTheirOwnWhichLaterJobsReuse(): void
    {
        $worker = self::worker();
        $first = self::ask($worker, 'sleep:0.1', 'sleep:0.1', 'sleep:0.1');
        $fibers = array_map(static fn (string $a): string => explode('|', $a)[0], $first);
        self::assertSame(['f1', 'f2', 'f3'], $fibers);
        $again = [...self::ask($worker, 'sleep:0.05', 'sleep:0.05', 'sleep:0.05'), ...self::ask($worker, 'id')];
        foreach ($again as $answer) {
            self::assertContains(explode('|', $answer)[0], ['f1', 'f2', 'f3'], 'no new Fiber: ' . implode(', ', $again));
        }
    }

    public function testFiberOfAFailedJobIsNotReused(): void
    {
        $worker = self::worker();
        self::assertSame(['f1|'], self::ask($worker, 'id'));
        self::assertMatchesRegularExpression('/^ERROR RuntimeException: job \d+ failed/', self::ask($worker, 'throw')[0]);
        self::assertSame(['f2|', 'f2|'], self::ask($worker, 'id', 'id'));
    }

    public function testFiberOfAJobFailedAsStuckIsNotReused(): void
    {
        $worker = self::worker();
        self::assertSame(['f1|'], self::ask($worker, 'id'));
        self::assertStringContainsString('suspended its Fiber outside', self::ask($worker, 'suspend')[0]);
        self::assertSame(['f2|'], self::ask($worker, 'id'));
    }

    public function testCallbackOfAnEndedJobDoesNotFailTheNextJobInItsFiber(): void
    {
        $worker = self::worker();
        self::assertSame(['f1|'], self::ask($worker, 'late-throw:0.05'));
        // The callback fails while this job waits in the same Fiber.
        [$answer] = self::ask($worker, 'sleep:0.2');
        self::assertMatchesRegularExpression('/^f1\|slept 0\.2\d$/', $answer);
        self::assertStringContainsString('event loop callback failed: RuntimeException: late callback of job', $worker->stderr());
    }

    public function testStaleResumeOfAnEndedJobDoesNotWakeTheNextJobInItsFiber(): void
    {
        $worker = self::worker();
        self::assertSame(['f1|'], self::ask($worker, 'late-resume:0.05'));
        [$answer] = self::ask($worker, 'sleep:0.2');
        self::assertMatchesRegularExpression('/^f1\|slept 0\.2\d$/', $answer, 'woken by the resume meant for the job before');
        self::assertStringContainsString('resumed by something other than what it waits for', $worker->stderr());
        // And while the Fiber is parked: it stays parked, and serves the next job.
        self::assertSame(['f1|'], self::ask($worker, 'late-resume:0.02'));
        usleep(100000);
        self::assertSame(['f1|'], self::ask($worker, 'id'));
        self::assertSame(2, substr_count($worker->stderr(), 'resumed by something other'));
    }

    public function testFutureSettlingAfterItsJobEndedDoesNotReachTheNextJob(): void
    {
        if (!is_file(\dirname(__DIR__, 2) . '/tarantool/autoload.php')) {
            self::markTestSkipped('php/tarantool is not next to php/worker');
        }
        $worker = self::worker(['POOL_TARANTOOL' => '1']);
        // The Future settles 0.1 s in, while the next job sleeps through php/tarantool, then
        // through the worker's loop.
        self::assertSame(['f1|timed out'], self::ask($worker, 'future-timeout:0.1'));
        self::assertMatchesRegularExpression('/^f1\|slept 0\.3\d$/', self::ask($worker, 'tsleep:0.3')[0]);
        self::assertSame(['f1|timed out'], self::ask($worker, 'future-timeout:0.1'));
        self::assertMatchesRegularExpression('/^f1\|slept 0\.3\d$/', self::ask($worker, 'sleep:0.3')[0]);
        self::assertStringNotContainsString('resumed by something other', $worker->stderr(), 'the Future forgot the waiter');
    }

    public function testNextJobInAFiberSeesNoOutputOrErrorReportingOfTheLastOne(): void
    {
        $worker = self::worker();
        self::assertSame(['f1|'], self::ask($worker, 'echo:left behind'));
        self::assertSame(['f1|mine'], self::ask($worker, 'output'));
        self::assertStringContainsString('left behind', $worker->stderr());
        // Set to E_ALL outside any Fiber after the first job: a new Fiber would start with it.
        self::assertSame(['f1|'], self::ask($worker, 'quiet'));
        self::assertSame(['f1|' . E_ALL], self::ask($worker, 'reporting'));
    }

    public function testPoolKeepsAtMostMaxFibersAndFreesIdleOnes(): void
    {
        $loop = new Loop();
        Loop::setDefault($loop);
        try {
            $pool = new FiberPool(2, static function (Job $job): bool {
                Loop::sleep((float) $job->payload->body);

                return true;
            }, idleSeconds: 0.05);
            $capture = new SyncCapture();
            $run = static function (string ...$sleeps) use ($pool, $capture, $loop): void {
                foreach ($sleeps as $i => $seconds) {
                    $pool->start(new Job(new Payload($seconds, '', $i), $capture));
                }
                $loop->run();
            };
            $run('0.01', '0.02', '0.03');
            self::assertSame([3, 2], [$pool->created(), $pool->idle()], 'three at once, two kept');
            $run('0.01', '0.01');
            self::assertSame([3, 2], [$pool->created(), $pool->idle()], 'both reused');
            $run('0');
            self::assertSame(3, $pool->created(), 'a job that never waits reuses one too');
            usleep(60000);
            $pool->trim();
            self::assertSame(0, $pool->idle(), 'idle for longer than idleSeconds');
            $run('0');
            self::assertSame([4, 1], [$pool->created(), $pool->idle()]);
            $pool->trim(all: true);
            self::assertSame(0, $pool->idle());
        } finally {
            Loop::setDefault(null);
        }
    }

    public function testSuspensionResumesOnlyItsOwnWait(): void
    {
        $logged = [];
        Worker::setLogger(static function (string $message) use (&$logged): void {
            $logged[] = $message;
        });
        try {
            $first = $second = null;
            $fiber = new \Fiber(static function () use (&$first, &$second): string {
                $first = new Suspension(\Fiber::getCurrent());
                $a = $first->suspend();
                $second = new Suspension(\Fiber::getCurrent());

                return $a . $second->suspend();
            });
            $fiber->start();
            self::assertTrue($first->resume('a'));
            self::assertFalse($first->resume('stale'), 'its wait is over: the Fiber waits on the second');
            $fiber->resume('bare'); // behind the token's back: ignored, still waiting
            self::assertTrue($fiber->isSuspended());
            self::assertCount(1, $logged);
            self::assertTrue($second->resume('b'));
            self::assertSame('ab', $fiber->getReturn());
            self::assertFalse($second->resume('late'));
        } finally {
            Worker::setLogger(null);
        }
    }
}
