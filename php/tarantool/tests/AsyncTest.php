<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\EventLoop;
use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\TimeoutException;
use Ferry\Tarantool\Tests\Support\TarantoolServer;

/** Futures, Fibers and the event loop. */
final class AsyncTest extends TarantoolTestCase
{
    public function testPipelinedFuturesWithoutALoop(): void
    {
        $c = $this->client();
        $space = $c->evaluate('box.space.users:truncate() return box.space.users.id')[0];
        $futures = [];
        for ($i = 1; $i <= 50; $i++) {
            $futures[$i] = $c->async()->replace($space, [$i, "n$i"]);
        }
        $this->assertSame(50, $c->handler()->inFlight(), 'by id: queued at once, no Fiber per request');
        $rows = Future::all($futures);
        $this->assertSame([7, 'n7'], $rows[7]);
        $selects = \array_map(fn ($i) => $c->async()->select('users', [$i]), \range(1, 50));
        $this->assertSame([[[50, 'n50']]], \array_slice(Future::all($selects), 49));
    }

    public function testFibersWaitConcurrentlyOnOneConnection(): void
    {
        $c = $this->client();
        $t = \microtime(true);
        $results = Scheduler::run(static function () use ($c): array {
            $tasks = [];
            for ($i = 0; $i < 10; $i++) {
                $tasks[] = Scheduler::spawn(static fn () => $c->call('slow', [0.2])[0] + $i);
            }
            return Future::all($tasks);
        });
        $elapsed = \microtime(true) - $t;
        $this->assertSame(\range(0.2, 9.2), $results);
        $this->assertLessThan(1.0, $elapsed, '10 x 0.2 s calls must overlap, not run one after another');
        $this->assertSame(0, $c->handler()->inFlight());
    }

    public function testSlowFiberDoesNotHoldBackOthers(): void
    {
        $c = $this->client();
        $order = [];
        $slow = Scheduler::spawn(static function () use ($c, &$order) {
            $c->call('slow', [0.3]);
            $order[] = 'slow';
        });
        $fast = Scheduler::spawn(static function () use ($c, &$order) {
            for ($i = 0; $i < 20; $i++) {
                $c->ping();
            }
            $order[] = 'fast';
        });
        Loop::get()->run();
        $this->assertSame(['fast', 'slow'], $order);
        $this->assertFalse($slow->isPending());
        $this->assertFalse($fast->isPending());
    }

    public function testOneLoopDrivesForeignStreamsAndTarantool(): void
    {
        $c = $this->client();
        [$left, $right] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $log = [];
        Scheduler::spawn(static function () use ($left, &$log) {
            $log[] = Scheduler::awaitReadable($left, 2.0) ? 'readable: ' . \fread($left, 100) : 'timeout';
        });
        Scheduler::spawn(static function () use ($c, $right, &$log) {
            $v = $c->evaluate('return ...', ['from tarantool'])[0];
            $log[] = 'tarantool';
            Scheduler::sleep(0.05);
            \fwrite($right, $v);
        });
        Scheduler::spawn(static function () use ($left, &$log) {
            $log[] = Scheduler::awaitReadable(\fopen('php://memory', 'r'), 0.01) ? 'memory' : 'timer fired';
        });
        Loop::get()->run();
        \sort($log);
        $this->assertSame(['readable: from tarantool', 'tarantool', 'timer fired'], $log);
    }

    public function testAnyEventLoopImplementationCanBeInstalled(): void
    {
        $loop = new class () implements EventLoop {
            public array $calls = [];
            private StreamSelectLoop $inner;

            public function __construct()
            {
                $this->inner = new StreamSelectLoop();
            }

            public function onReadable($stream, \Closure $callback): string
            {
                $this->calls['onReadable'] = ($this->calls['onReadable'] ?? 0) + 1;
                return $this->inner->onReadable($stream, $callback);
            }

            public function onWritable($stream, \Closure $callback): string
            {
                return $this->inner->onWritable($stream, $callback);
            }

            public function delay(float $seconds, \Closure $callback): string
            {
                $this->calls['delay'] = ($this->calls['delay'] ?? 0) + 1;
                return $this->inner->delay($seconds, $callback);
            }

            public function defer(\Closure $callback): void
            {
                $this->inner->defer($callback);
            }

            public function cancel(string $id): void
            {
                $this->inner->cancel($id);
            }

            public function run(): void
            {
                $this->inner->run();
            }

            public function stop(): void
            {
                $this->inner->stop();
            }

            public function isRunning(): bool
            {
                return $this->inner->isRunning();
            }
        };
        $c = $this->client();
        // Used under the default loop first: switching loops must not strand its flush queue.
        $this->assertSame([[0.01]], Scheduler::run(static fn () => [$c->call('slow', [0.01])]));
        $c->async()->ping(); // a flush queued on the old loop, never run there
        Loop::set($loop);
        $r = Scheduler::run(static fn () => [$c->call('slow', [0.01]), $c->evaluate('return 2')]);
        $this->assertSame([[0.01], [2]], $r);
        $this->assertGreaterThanOrEqual(1, $loop->calls['onReadable']);
        $this->assertGreaterThanOrEqual(1, $loop->calls['delay'], 'request deadlines are loop timers');
    }

    public function testTimeoutInsideTheLoopFailsOnlyTheLateRequest(): void
    {
        $conn = new Connection(static::$server->uri(), ['read_timeout' => 0.2]);
        $c = new Client($conn);
        $slow = Scheduler::spawn(static fn () => $c->call('slow', [0.4]));
        $fast = Scheduler::spawn(static fn () => $c->evaluate('return 1'));
        Loop::get()->run();
        $this->assertSame([1], $fast->await());
        try {
            $slow->await();
            $this->fail('no exception');
        } catch (TimeoutException $e) {
            $this->assertStringContainsString('No reply within 0.200 s', $e->getMessage());
        }
        \usleep(300000);
        // The late reply (sync of the dropped request) is discarded, not taken as this answer.
        $this->assertSame(['after'], Scheduler::run(static fn () => $c->evaluate("return 'after'")));
    }

    public function testAllWaitingFibersFailWhenTheServerDies(): void
    {
        $server = TarantoolServer::start([], self::SCHEMA);
        try {
            $c = Client::connect($server->uri());
            $c->ping();
            $tasks = [];
            for ($i = 0; $i < 5; $i++) {
                $tasks[] = Scheduler::spawn(static fn () => $c->call('slow', [5]));
            }
            Scheduler::spawn(static function () use ($server) {
                Scheduler::sleep(0.1);
                $server->kill();
            });
            Loop::get()->run();
            foreach ($tasks as $t) {
                try {
                    $t->await();
                    $this->fail('no exception');
                } catch (ConnectionException $e) {
                    $this->assertTrue($e->requestSent);
                }
            }
        } finally {
            $server->stop();
        }
    }

    public function testNamesAndMiddlewareWorkThroughTheAsyncApi(): void
    {
        $c = $this->client()->withMiddleware(new \Ferry\Tarantool\Middleware\RetryMiddleware());
        $c->replace('users', [77, 'async-name']);
        $futures = [$c->async()->select('users', ['async-name'], 'name'), $c->async()->call('multi')];
        $this->assertSame([[[77, 'async-name']], [1, 'two', [3]]], Future::all($futures));
    }

    public function testSchedulerPropagatesExceptionsAndBlockingInCallbacksIsRefused(): void
    {
        try {
            Scheduler::run(static function (): never {
                throw new \DomainException('from fiber');
            });
            $this->fail('no exception');
        } catch (\DomainException $e) {
            $this->assertSame('from fiber', $e->getMessage());
        }
        $caught = null;
        Loop::get()->defer(static function () use (&$caught) {
            try {
                Scheduler::spawn(static fn () => 1)->await();
            } catch (\LogicException $e) {
                $caught = $e->getMessage();
            }
        });
        Loop::get()->run();
        $this->assertStringContainsString('Cannot block on a future from an event loop callback', (string) $caught);
    }
}
