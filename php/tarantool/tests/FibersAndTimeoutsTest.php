<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Exception\TimeoutException;
use Ferry\Tarantool\Tests\Support\FakeServer;

/**
 * Opening a connection inside a Fiber suspends only that Fiber, and a request may carry its
 * own timeout. Order of events, not durations, tells whether the other Fibers kept running.
 */
final class FibersAndTimeoutsTest extends TarantoolTestCase
{
    /** A valid greeting, then silence: AUTH is never answered. */
    private const GREETING = "Tarantool 2.6.0 (Binary) 00000000-0000-0000-0000-000000000000";

    /** @return iterable<string, array{string, ?string, string}> */
    public static function stalledPeers(): iterable
    {
        yield 'no greeting' => ['', null, 'No greeting from'];
        $greeting = \str_pad(self::GREETING, 63) . "\n" . \str_pad(\base64_encode(\str_repeat('s', 32)), 63) . "\n";
        yield 'greeting but no AUTH reply' => [$greeting, 'test:secret', 'Read timed out'];
    }

    /** @dataProvider stalledPeers */
    public function testConnectingFiberDoesNotBlockTheOthers(string $banner, ?string $credentials, string $message): void
    {
        $fake = new FakeServer($banner);
        $stalled = Client::connect('tcp://' . ($credentials !== null ? "$credentials@" : '') . '127.0.0.1:' . $fake->port, ['connect_timeout' => 0.5]);
        $healthy = $this->client();
        $events = [];
        Scheduler::run(static function () use ($stalled, $healthy, &$events): void {
            $a = Scheduler::spawn(static function () use ($stalled, &$events): void {
                try {
                    $stalled->ping();
                    $events[] = 'stalled: answered?!';
                } catch (ConnectionException $e) {
                    $events[] = 'stalled: ' . $e->getMessage();
                }
            });
            $b = Scheduler::spawn(static function () use ($healthy, &$events): void {
                for ($i = 0; $i < 20; $i++) {
                    $healthy->ping(); // connects too, suspending, then 20 round trips
                }
                $events[] = 'healthy: 20 pings';
            });
            Future::all([$a, $b]);
        });
        $this->assertCount(2, $events);
        $this->assertSame('healthy: 20 pings', $events[0], 'the other Fiber ran while the connect was stuck');
        $this->assertStringContainsString($message, $events[1]);
        $this->assertFalse($stalled->terminal()->isConnected());
    }

    public function testFibersShareOneConnectAttemptAndNothingOvertakesAuth(): void
    {
        $conn = new Connection(static::$server->uri(), ['connect_timeout' => 2]);
        $client = new Client($conn);
        $users = Scheduler::run(static function () use ($client): array {
            $tasks = [];
            for ($i = 0; $i < 10; $i++) {
                $tasks[] = Scheduler::spawn(static fn () => $client->call('whoami')[0]);
            }
            return Future::all($tasks);
        });
        $this->assertSame(\array_fill(0, 10, 'test'), $users, 'every request ran after AUTH, as the user');
        $this->assertSame(1, $conn->generation(), 'one session for all of them');

        $wrong = new Client(new Connection(static::$server->uri('test:wrong'), ['connect_timeout' => 2]));
        $errors = Scheduler::run(static function () use ($wrong): array {
            $tasks = [];
            for ($i = 0; $i < 3; $i++) {
                $tasks[] = Scheduler::spawn(static function () use ($wrong): string {
                    try {
                        $wrong->ping();
                        return 'answered';
                    } catch (ServerException|ConnectionException $e) {
                        return \get_class($e);
                    }
                });
            }
            return Future::all($tasks);
        });
        $this->assertSame(\array_fill(0, 3, ServerException::class), $errors, 'the AUTH error reaches every waiting Fiber');
    }

    public function testPerCallTimeoutBlocking(): void
    {
        $client = $this->client(['read_timeout' => 5]);
        $t = \microtime(true);
        try {
            $client->with(timeout: 0.2)->call('slow', [3]);
            $this->fail('no timeout');
        } catch (TimeoutException $e) {
            $this->assertTrue($e->requestSent);
        }
        $this->assertLessThan(2.0, \microtime(true) - $t, 'the call timeout, not read_timeout (5 s)');
        $this->assertSame([0.05], $client->call('slow', [0.05]), 'the client itself keeps read_timeout');
        $this->assertSame([0.05], $client->with(timeout: 2)->call('slow', [0.05]));
    }

    public function testPerCallTimeoutInFibersFailsOnlyThatCallAndOnTime(): void
    {
        $client = $this->client(['read_timeout' => 5]);
        $events = [];
        Scheduler::run(static function () use ($client, &$events): void {
            // The long-deadline request goes first, so the short one must re-arm the timer.
            $patient = Scheduler::spawn(static function () use ($client, &$events): void {
                $client->call('slow', [0.6]);
                $events[] = 'patient done';
            });
            $hasty = Scheduler::spawn(static function () use ($client, &$events): void {
                try {
                    $client->with(timeout: 0.1)->call('slow', [2]);
                    $events[] = 'hasty answered?!';
                } catch (TimeoutException) {
                    $events[] = 'hasty timed out';
                }
            });
            Future::all([$patient, $hasty]);
        });
        $this->assertSame(['hasty timed out', 'patient done'], $events);

        $f = $client->with(timeout: 0.1)->async()->call('slow', [2]);
        $this->expectException(TimeoutException::class);
        $f->await();
    }

    public function testTimeoutMustBePositive(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->client()->with(timeout: 0.0);
    }
}
