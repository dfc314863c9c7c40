<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\ReplicaSet;
use Ferry\Tarantool\Tests\Support\Forked;
use Ferry\Worker\Fork;

/**
 * A connection used in a process forked after it connected (Ferry's pool.boot: fork forks
 * every worker from a zygote that may have connected while booting). The child must get a
 * session of its own; the parent keeps its session, its requests in flight and its replies.
 * Sessions are told apart by box.session.id().
 */
final class ForkTest extends TarantoolTestCase
{
    private const SESSION = 'return box.session.id()';
    /** Held by the server until the test opens the gate: a request in flight across the fork. */
    private const HELD = 'gate:wait(10) return box.session.id()';

    protected function setUp(): void
    {
        $this->client()->evaluate("gate = require('fiber').cond()");
    }

    private function connection(string $query = ''): Connection
    {
        return new Connection(static::$server->uri() . $query, ['read_timeout' => 10, 'connect_timeout' => 2]);
    }

    /** @return list<array{string, int, mixed}> the calls whose answer was not their own */
    private static function echoes(Client $c, string $who, int $n): array
    {
        $wrong = [];
        for ($i = 0; $i < $n; $i++) {
            $got = $c->evaluate('return ...', [$who, $i]);
            if ($got !== [$who, $i]) {
                $wrong[] = [$who, $i, $got];
            }
        }
        return $wrong;
    }

    public function testChildGetsItsOwnSessionWhileTheParentKeepsItsRequestInFlight(): void
    {
        $conn = $this->connection();
        $c = new Client($conn);
        $session = $c->evaluate(self::SESSION)[0];
        $held = $c->async()->evaluate(self::HELD);
        $c->async()->ping()->await(); // written behind the held request, so that one is out too
        $this->assertSame(1, $conn->inFlight());

        $child = Forked::run(static function () use ($c, $conn, $held): array {
            $own = $c->evaluate(self::SESSION)[0];
            $wrong = self::echoes($c, 'child', 100);
            $futures = [];
            for ($i = 0; $i < 50; $i++) {
                $futures[$i] = $c->async()->evaluate('return ...', ['pipelined', $i]);
            }
            foreach (Future::all($futures) as $i => $got) {
                if ($got !== ['pipelined', $i]) {
                    $wrong[] = ['pipelined', $i, $got];
                }
            }
            $fibers = Scheduler::run(static function () use ($c): array {
                $tasks = [];
                for ($i = 0; $i < 20; $i++) {
                    $tasks[$i] = Scheduler::spawn(static fn () => $c->evaluate('return ...', ['fiber', $i]));
                }
                return Future::all($tasks);
            });
            foreach ($fibers as $i => $got) {
                if ($got !== ['fiber', $i]) {
                    $wrong[] = ['fiber', $i, $got];
                }
            }
            try {
                $inherited = ['answered', $held->await()];
            } catch (ConnectionException $e) {
                $inherited = ['failed', $e->getMessage()];
            }
            return [
                'session' => $own,
                'sessionAtEnd' => $c->evaluate(self::SESSION)[0],
                'wrong' => $wrong,
                'held' => $inherited,
                'generation' => $conn->generation(),
                'declared' => Fork::isReopened(\fstat($conn->stream())['ino']),
            ];
        });
        // Meanwhile, on the same client object and its own session.
        $this->assertSame([], self::echoes($c, 'parent', 100), 'the parent got its own answers');
        $report = $child->result();

        $this->assertNotSame($session, $report['session'], 'the child has a session of its own');
        $this->assertSame($report['session'], $report['sessionAtEnd']);
        $this->assertSame([], $report['wrong'], 'the child got its own answers (sync, pipelined, Fibers)');
        $this->assertSame('failed', $report['held'][0], 'the parent\'s request in flight is not the child\'s to answer: ' . \json_encode($report['held']));
        $this->assertStringContainsString('before it forked this one', $report['held'][1]);
        $this->assertSame(2, $report['generation'], 'the child reconnected once');
        $this->assertTrue($report['declared'], 'the child\'s socket is declared to the fork-server too');

        $c->evaluate('gate:broadcast()');
        $this->assertSame([$session], $held->await(), 'the held request answered the parent, on its session');
        $this->assertSame([$session], $c->evaluate(self::SESSION));
        $this->assertSame(1, $conn->generation(), 'the parent never reconnected');
    }

    public function testChildNeverReadsRepliesTheParentIsWaitingFor(): void
    {
        $conn = $this->connection();
        $c = new Client($conn);
        $c->ping();
        $futures = [];
        for ($i = 0; $i < 3; $i++) {
            $futures[$i] = $c->async()->evaluate('return ...', ['parent', $i]);
        }
        // Written but not read: at the fork their replies wait in the socket's receive buffer.
        (function (): void {
            $this->flush(true);
        })->call($conn);
        $r = [$conn->stream()];
        $w = $e = null;
        $this->assertSame(1, \stream_select($r, $w, $e, 5), 'the replies arrived');

        $child = Forked::run(static function () use ($c, $futures): array {
            $own = $c->evaluate('return ...', ['child']);
            $theirs = [];
            foreach ($futures as $i => $f) {
                try {
                    $theirs[$i] = ['answered', $f->await()];
                } catch (ConnectionException $e) {
                    $theirs[$i] = ['failed', $e->getMessage()];
                }
            }
            return ['own' => $own, 'theirs' => $theirs];
        });
        $report = $child->result();

        $this->assertSame(['child'], $report['own']);
        foreach ($report['theirs'] as $i => [$outcome, $detail]) {
            $this->assertSame('failed', $outcome, "the child got the parent's reply #$i: " . \json_encode($detail));
            $this->assertStringContainsString('its reply goes to that process', $detail);
        }
        $this->assertSame([['parent', 0], ['parent', 1], ['parent', 2]], Future::all($futures), 'the parent got its replies');
        $this->assertSame(1, $conn->generation());
    }

    public function testChildClosingTheClientLeavesTheParentsSessionUp(): void
    {
        $conn = $this->connection();
        $c = new Client($conn);
        $session = $c->evaluate(self::SESSION)[0];
        Forked::run(static function () use ($c): bool {
            $c->close(); // as a worker does when it stops
            return true;
        })->result();
        $this->assertSame([$session], $c->evaluate(self::SESSION));
        $this->assertSame(1, $conn->generation());
    }

    public function testFiberForkedUnderTheLoopLeavesTheParentsWatcherAlone(): void
    {
        $conn = $this->connection();
        $c = new Client($conn);
        $session = $c->evaluate(self::SESSION)[0];
        [$report, $held] = Scheduler::run(function () use ($c, $conn): array {
            $held = Scheduler::spawn(static fn () => $c->evaluate(self::HELD));
            // Once its frame is out, the loop watches the socket for the reply: fork then.
            while ((function (): ?string {
                return $this->watcher;
            })->call($conn) === null) {
                Scheduler::sleep(0.0);
            }
            $this->assertSame(1, $conn->inFlight());
            $report = Forked::run(static function () use ($c, $held): array {
                // Still inside the loop and the Fiber, in the child.
                $own = $c->evaluate(self::SESSION)[0];
                $wrong = self::echoes($c, 'child', 50);
                try {
                    $inherited = ['answered', $held->await()];
                } catch (ConnectionException $e) {
                    $inherited = ['failed', $e->getMessage()];
                }
                return ['session' => $own, 'wrong' => $wrong, 'held' => $inherited];
            })->result();
            $c->evaluate('gate:broadcast()');
            return [$report, $held->await()];
        });
        $this->assertNotSame($session, $report['session']);
        $this->assertSame([], $report['wrong']);
        $this->assertSame('failed', $report['held'][0], \json_encode($report['held']));
        $this->assertSame([$session], $held);
        $this->assertSame(1, $conn->generation());
    }

    /** @return iterable<string, array{bool}> */
    public static function loopStates(): iterable
    {
        yield 'a watcher on the socket' => [false];
        yield 'a watcher and a frame queued for the next flush' => [true];
    }

    /** @dataProvider loopStates */
    public function testChildsLoopNeitherFlushesNorReadsForTheParent(bool $queue): void
    {
        $conn = $this->connection();
        $c = new Client($conn);
        $admin = $this->client();
        $admin->evaluate('hits = 0');
        $session = $c->evaluate(self::SESSION)[0];
        $uri = static::$server->uri();
        [$report, $held, $hit] = Scheduler::run(function () use ($c, $conn, $uri, $queue): array {
            $held = Scheduler::spawn(static fn () => $c->evaluate(self::HELD));
            while ((function (): ?string {
                return $this->watcher;
            })->call($conn) === null) {
                Scheduler::sleep(0.0);
            }
            // Queued for the loop's next flush: not yet written at the fork.
            $hit = $queue ? $c->async()->evaluate('hits = hits + 1 return hits') : Future::resolved([0]);
            // A descriptor of the socket that the connection does not know about, to see its
            // replies arrive without reading them.
            $watch = self::duplicate($conn->stream());
            $report = Forked::run(static function () use ($c, $held, $hit, $uri, $watch): array {
                // The loop turns before the connection is used here: with the parent's
                // watcher on the socket and its queued frame due to be flushed.
                (new Client(new Connection($uri)))->evaluate('gate:broadcast()');
                $arrived = Scheduler::awaitReadable($watch, 5.0);
                $outcomes = [];
                foreach (['held' => $held, 'hit' => $hit] as $name => $f) {
                    try {
                        $outcomes[$name] = ['answered', $f->await()];
                    } catch (ConnectionException $e) {
                        $outcomes[$name] = ['failed', $e->getMessage()];
                    }
                }
                return ['arrived' => $arrived, 'session' => $c->evaluate(self::SESSION)[0]] + $outcomes;
            })->result();
            return [$report, $held->await(), $hit->await()];
        });
        $this->assertTrue($report['arrived'], 'the held request\'s reply reached the socket while the child\'s loop ran');
        $this->assertSame('failed', $report['held'][0], 'the child read the parent\'s reply: ' . \json_encode($report['held']));
        if ($queue) {
            $this->assertSame('failed', $report['hit'][0], \json_encode($report['hit']));
        }
        $this->assertNotSame($session, $report['session']);
        $this->assertSame([$session], $held, 'the parent read its reply');
        $this->assertSame($queue ? [1] : [0], $hit);
        $this->assertSame($hit, $admin->evaluate('return hits'), 'the parent\'s queued request ran once: the child did not write it');
        $this->assertSame(1, $conn->generation());
    }

    /**
     * @param resource $stream
     * @return resource another descriptor of the same socket (php://fd/N dup()s N)
     */
    private static function duplicate($stream)
    {
        $link = 'socket:[' . \fstat($stream)['ino'] . ']';
        foreach ((array) \scandir('/proc/self/fd') as $fd) {
            if (@\readlink('/proc/self/fd/' . $fd) === $link) {
                return \fopen('php://fd/' . $fd, 'r');
            }
        }
        throw new \RuntimeException('No descriptor for ' . $link);
    }

    /** @return iterable<string, array{bool}> */
    public static function persistentOrders(): iterable
    {
        yield 'a new connection first' => [true];
        yield 'the inherited connection first' => [false];
    }

    /** @dataProvider persistentOrders */
    public function testPersistentSocketsAreNotSharedWithTheChild(bool $freshFirst): void
    {
        $conn = $this->connection('?persistent=1');
        $c = new Client($conn);
        $session = $c->evaluate(self::SESSION)[0];
        [$fresh, $inherited] = Forked::run(function () use ($c, $freshFirst): array {
            // PHP looks a persistent socket up by its address: it must not hand back the parent's.
            $new = fn () => (new Client($this->connection('?persistent=1')))->evaluate(self::SESSION)[0];
            $inherited = $freshFirst ? null : $c->evaluate(self::SESSION)[0];
            $fresh = $new();
            return [$fresh, $inherited ?? $c->evaluate(self::SESSION)[0]];
        })->result();
        $this->assertNotSame($session, $fresh, 'a new persistent connection in the child');
        $this->assertNotSame($session, $inherited, 'the inherited persistent connection');
        $this->assertSame($fresh, $inherited, 'the child\'s own persistent socket serves both');
        $this->assertSame([$session], $c->evaluate(self::SESSION));
        $this->assertSame(1, $conn->generation());
        $c->close();
    }

    public function testReplicaSetMembersReconnectInTheChild(): void
    {
        $uri = static::$server->uri();
        $set = new ReplicaSet([$uri, $uri], ['read_timeout' => 10]);
        $c = new Client($set);
        $sessionsOf = static fn (ReplicaSet $set): array => \array_map(
            static fn (Connection $node) => (new Client($node))->evaluate(self::SESSION)[0],
            $set->connections(),
        );
        $c->evaluate('return 1'); // discovers both instances' roles
        $parent = $sessionsOf($set);
        $report = Forked::run(static fn (): array => [
            'via' => $c->evaluate(self::SESSION)[0],
            'members' => $sessionsOf($set),
        ])->result();
        $this->assertContains($report['via'], $report['members']);
        $this->assertSame([], \array_intersect($report['members'], $parent), 'no member session shared with the parent');
        $this->assertSame($parent, $sessionsOf($set));
    }

    public function testEverySessionIsDeclaredToTheForkServer(): void
    {
        $blocking = $this->connection();
        $blocking->connect();
        $suspending = $this->connection();
        Scheduler::run(static fn () => (new Client($suspending))->ping());
        foreach (['blocking' => $blocking, 'from a Fiber' => $suspending] as $how => $conn) {
            $this->assertTrue(Fork::isReopened(\fstat($conn->stream())['ino']), "the socket connected $how");
        }
    }
}
