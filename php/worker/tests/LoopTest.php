<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Internal\Fiber\FiberEpoch;
use Ferry\Worker\Loop;
use Ferry\Worker\Worker;
use PHPUnit\Framework\TestCase;

final class LoopTest extends TestCase
{
    private Loop $loop;

    protected function setUp(): void
    {
        $this->loop = new Loop();
        Loop::setDefault($this->loop);
    }

    protected function tearDown(): void
    {
        Loop::setDefault(null);
    }

    public function testTimersFireByDueTimeThenInsertionOrder(): void
    {
        $order = [];
        $this->loop->delay(0.03, static function () use (&$order): void {
            $order[] = 'late';
        });
        $this->loop->delay(0.0, static function () use (&$order): void {
            $order[] = 'now-1';
        });
        $this->loop->delay(0.0, static function () use (&$order): void {
            $order[] = 'now-2';
        });
        $cancelled = $this->loop->delay(0.01, static function () use (&$order): void {
            $order[] = 'cancelled';
        });
        $this->loop->defer(static function () use (&$order): void {
            $order[] = 'deferred';
        });
        $this->loop->cancel($cancelled);
        $this->loop->run();
        self::assertSame(['deferred', 'now-1', 'now-2', 'late'], $order);
        self::assertFalse($this->loop->hasPending());
    }

    public function testSleepingFibersCompleteOutOfOrder(): void
    {
        $done = [];
        foreach ([1 => 0.15, 2 => 0.03, 3 => 0.08] as $id => $seconds) {
            $fiber = new \Fiber(static function () use ($id, $seconds, &$done): void {
                Loop::sleep($seconds);
                $done[] = $id;
            });
            $fiber->start();
        }
        self::assertSame([], $done, 'fibers must be suspended, not blocking');
        $this->loop->run();
        self::assertSame([2, 3, 1], $done);
    }

    public function testAwaitReadableResumesWhenDataArrives(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $result = null;
        $fiber = new \Fiber(function () use ($a, &$result): void {
            $ready = $this->loop->awaitReadable($a, 5.0);
            $result = [$ready, fread($a, 100)];
        });
        $fiber->start();
        $this->loop->delay(0.02, static fn () => fwrite($b, 'ping'));
        $this->loop->run();
        self::assertSame([true, 'ping'], $result);
        self::assertFalse($this->loop->hasPending(), 'watcher and timeout timer removed');
        fclose($a);
        fclose($b);
    }

    public function testAwaitReadableTimesOut(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $result = null;
        $fiber = new \Fiber(function () use ($a, &$result): void {
            $result = $this->loop->awaitReadable($a, 0.02);
        });
        $fiber->start();
        $this->loop->run();
        self::assertFalse($result);
        self::assertFalse($this->loop->hasPending());
        fclose($a);
        fclose($b);
    }

    public function testAwaitOutsideAFiberRunsTheLoop(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertTrue($this->loop->awaitWritable($a, 1.0));
        $this->loop->delay(0.01, static fn () => fwrite($b, 'x'));
        self::assertTrue($this->loop->awaitReadable($a, 1.0));
        self::assertSame('x', fread($a, 10));
        fclose($a);
        fclose($b);
    }

    public function testSleepOutsideAFiberLetsOtherWorkRun(): void
    {
        $ran = false;
        $fiber = new \Fiber(static function () use (&$ran): void {
            Loop::sleep(0.01);
            $ran = true;
        });
        $fiber->start();
        Loop::sleep(0.05);
        self::assertTrue($ran);
    }

    public function testReadableWatcherRepeatsUntilCancelled(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $chunks = [];
        $this->loop->onReadable($a, function ($stream, int $id) use (&$chunks): void {
            $chunks[] = fread($stream, 100);
            if (\count($chunks) === 2) {
                $this->loop->cancel($id);
            }
        });
        fwrite($b, 'one');
        $this->loop->tick();
        fwrite($b, 'two');
        $this->loop->run();
        self::assertSame(['one', 'two'], $chunks);
        fclose($a);
        fclose($b);
    }

    public function testCallbackExceptionIsThrownIntoTheFiberThatScheduledIt(): void
    {
        $caught = null;
        $other = false;
        $failing = new \Fiber(function () use (&$caught): void {
            $this->loop->delay(0.0, static fn () => throw new \RuntimeException('scheduled by the fiber'));
            try {
                Loop::sleep(30.0);
            } catch (\RuntimeException $e) {
                $caught = $e->getMessage();
            }
        });
        $failing->start();
        $bystander = new \Fiber(static function () use (&$other): void {
            Loop::sleep(0.01);
            $other = true;
        });
        $bystander->start();
        $this->loop->run();
        self::assertSame('scheduled by the fiber', $caught);
        self::assertTrue($other);
        self::assertTrue($failing->isTerminated());
        // run() returned: the interrupted sleep did not leave its timer behind.
        self::assertFalse($this->loop->hasPending());
    }

    public function testCallbacksRegisteredByACallbackKeepItsOwner(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $caught = null;
        $fiber = new \Fiber(function () use ($a, &$caught): void {
            $this->loop->delay(0.0, function (): void {
                $this->loop->defer(static fn () => throw new \RuntimeException('two hops away'));
            });
            try {
                $this->loop->awaitReadable($a, 30.0);
            } catch (\RuntimeException $e) {
                $caught = $e->getMessage();
            }
        });
        $fiber->start();
        $this->loop->run();
        self::assertSame('two hops away', $caught);
        self::assertFalse($this->loop->hasPending(), 'the watcher and timeout of the interrupted await are gone');
        fclose($a);
        fclose($b);
    }

    public function testExceptionWithoutAFiberToFailIsLoggedAndTheLoopGoesOn(): void
    {
        $log = [];
        Worker::setLogger(static function (string $message) use (&$log): void {
            $log[] = $message;
        });
        try {
            $ran = false;
            $fiber = new \Fiber(static function (): void {
                Loop::sleep(0.0);
                throw new \RuntimeException('from fiber');
            });
            $fiber->start();
            $this->loop->delay(0.0, static fn () => throw new \RuntimeException('from the main context'));
            $this->loop->delay(0.01, static function () use (&$ran): void {
                $ran = true;
            });
            $this->loop->run();
        } finally {
            Worker::setLogger(null);
        }
        self::assertTrue($ran);
        self::assertCount(2, $log);
        self::assertStringContainsString('event loop callback failed: RuntimeException: from fiber', $log[0]);
        self::assertStringContainsString('event loop callback failed: RuntimeException: from the main context', $log[1]);
    }

    public function testErrorHandlerReplacesTheDefault(): void
    {
        $seen = [];
        $this->loop->setErrorHandler(static function (\Throwable $e, ?\Fiber $owner) use (&$seen): void {
            $seen[] = [$e->getMessage(), $owner];
        });
        $slept = false;
        $fiber = new \Fiber(function () use (&$slept): void {
            $this->loop->delay(0.0, static fn () => throw new \RuntimeException('handled'));
            Loop::sleep(0.01);
            $slept = true;
        });
        $fiber->start();
        $this->loop->delay(0.0, static fn () => throw new \LogicException('unowned'));
        $this->loop->run();
        self::assertSame([['handled', $fiber], ['unowned', null]], $seen);
        self::assertTrue($slept, 'the fiber was not failed');
    }

    public function testWhatTheErrorHandlerThrowsGetsTheDefaultTreatment(): void
    {
        $this->loop->setErrorHandler(static function (\Throwable $e): void {
            throw new \RuntimeException('wrapped: ' . $e->getMessage());
        });
        $caught = null;
        $fiber = new \Fiber(function () use (&$caught): void {
            $this->loop->delay(0.0, static fn () => throw new \LogicException('inner'));
            try {
                Loop::sleep(30.0);
            } catch (\RuntimeException $e) {
                $caught = $e->getMessage();
            }
        });
        $fiber->start();
        $this->loop->run();
        self::assertSame('wrapped: inner', $caught);
    }

    public function testExceptionInACallbackTheOwnerTicksItselfPropagates(): void
    {
        $fiber = new \Fiber(function (): void {
            $this->loop->defer(static fn () => throw new \RuntimeException('in my own tick'));
            $this->loop->tick(false);
        });
        $this->expectExceptionMessage('in my own tick');
        $fiber->start();
    }

    public function testWaitIsEndedOnlyByItsOwnWakeUp(): void
    {
        $log = [];
        Worker::setLogger(static function (string $message) use (&$log): void {
            $log[] = $message;
        });
        try {
            $slept = null;
            $fiber = new \Fiber(static function () use (&$slept): void {
                $start = hrtime(true);
                Loop::sleep(0.1);
                $slept = (hrtime(true) - $start) / 1e9;
            });
            $fiber->start();
            // Something that kept the Fiber from an earlier wait resumes it directly.
            $this->loop->delay(0.01, static fn () => $fiber->resume());
            $this->loop->run();
            self::assertGreaterThanOrEqual(0.09, $slept);
            self::assertCount(1, $log);
            self::assertStringContainsString('resumed by something other than what it waits for', $log[0]);
        } finally {
            Worker::setLogger(null);
        }
    }

    public function testCallbackOfAnEarlierUseOfAFiberIsNotThrownIntoTheCurrentOne(): void
    {
        $log = [];
        Worker::setLogger(static function (string $message) use (&$log): void {
            $log[] = $message;
        });
        try {
            $caught = 'nothing';
            $fiber = new \Fiber(function () use (&$caught): void {
                $this->loop->delay(0.01, static fn () => throw new \RuntimeException('left behind'));
                // What the worker's Fiber pool does when a job ends and the Fiber takes another.
                FiberEpoch::advance(\Fiber::getCurrent());
                try {
                    Loop::sleep(0.05);
                } catch (\RuntimeException $e) {
                    $caught = $e->getMessage();
                }
            });
            $fiber->start();
            $this->loop->run();
            self::assertSame('nothing', $caught);
            self::assertStringContainsString('event loop callback failed: RuntimeException: left behind', $log[0] ?? '');
        } finally {
            Worker::setLogger(null);
        }
    }
}
