<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Async\StreamSelectLoop;
use PHPUnit\Framework\TestCase;

/**
 * A wait cut short by an exception thrown into its Fiber (a timeout, a cancellation) must
 * leave nothing that resumes the Fiber later, in whatever it waits for next: in a Ferry
 * worker in Fiber mode, that may be the next request. No Tarantool needed.
 */
final class StaleResumeTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::set(new StreamSelectLoop());
    }

    protected function tearDown(): void
    {
        Loop::set(new StreamSelectLoop());
    }

    /** Throws into the running Fiber $seconds from now, as a cancellation would. */
    private static function cancelIn(float $seconds): void
    {
        $fiber = \Fiber::getCurrent();
        Loop::get()->delay($seconds, static fn () => $fiber->throw(new \RuntimeException('cancelled')));
    }

    private static function timed(\Closure $wait): float
    {
        $start = \hrtime(true);
        $wait();

        return (\hrtime(true) - $start) / 1e9;
    }

    public function testFutureSettlingLateDoesNotWakeTheNextWait(): void
    {
        $future = new Future();
        $slept = Scheduler::run(static function () use ($future): float {
            self::cancelIn(0.02);
            try {
                $future->await();
            } catch (\RuntimeException) {
            }
            Loop::get()->delay(0.03, static fn () => $future->resolve('late'));

            return self::timed(static fn () => Scheduler::sleep(0.2));
        });
        $this->assertGreaterThanOrEqual(0.19, $slept, 'the future woke the sleep it was not meant for');
    }

    public function testTimerOfACancelledSleepDoesNotWakeTheNextWait(): void
    {
        [$a, $b] = \stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        [$ready, $waited] = Scheduler::run(static function () use ($a): array {
            self::cancelIn(0.01);
            try {
                Scheduler::sleep(0.05);
            } catch (\RuntimeException) {
            }
            $ready = null;
            $waited = self::timed(static function () use ($a, &$ready): void {
                $ready = Scheduler::awaitReadable($a, 0.2);
            });

            return [$ready, $waited];
        });
        $this->assertFalse($ready, 'nothing was written: the wait times out');
        $this->assertGreaterThanOrEqual(0.19, $waited);
    }

    public function testWatcherAndTimerOfACancelledStreamWaitDoNotWakeTheNextWait(): void
    {
        [$a, $b] = \stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $slept = Scheduler::run(static function () use ($a, $b): float {
            self::cancelIn(0.01);
            try {
                Scheduler::awaitReadable($a, 0.05);
            } catch (\RuntimeException) {
            }
            Loop::get()->delay(0.02, static fn () => \fwrite($b, 'x'));

            return self::timed(static fn () => Scheduler::sleep(0.2));
        });
        $this->assertGreaterThanOrEqual(0.19, $slept);
    }

    public function testBareResumeOfAWaitingFiberIsIgnored(): void
    {
        $slept = Scheduler::run(static function (): float {
            $fiber = \Fiber::getCurrent();
            Loop::get()->delay(0.02, static fn () => $fiber->resume());

            return self::timed(static fn () => Scheduler::sleep(0.1));
        });
        $this->assertGreaterThanOrEqual(0.09, $slept);
    }
}
