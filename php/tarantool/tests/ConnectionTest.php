<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Client;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ProtocolException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Exception\TimeoutException;
use Ferry\Tarantool\Tests\Support\FakeServer;
use Ferry\Tarantool\Tests\Support\TarantoolServer;

/** Transport: auth, URIs, timeouts, broken connections, reconnects, persistent sockets. */
final class ConnectionTest extends TarantoolTestCase
{
    public function testAuthenticatedUserAndGuest(): void
    {
        $this->assertSame(['test'], $this->client()->call('whoami'));
        $this->assertSame(['guest'], $this->client([], null)->call('whoami'));
        $this->assertSame(['guest'], $this->client([], 'guest')->call('whoami'));
        $this->assertSame(['test'], Client::connect('127.0.0.1:' . static::$server->port, ['user' => 'test', 'password' => 'secret'])->call('whoami'));
    }

    public function testWrongPasswordAndUnknownUser(): void
    {
        try {
            $this->client([], 'test:wrong')->ping();
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertStringContainsString("Incorrect password supplied for user 'test'", $e->getMessage());
        }
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage("User 'nobody' is not found");
        $this->client([], 'nobody:x')->ping();
    }

    public function testUnixSocket(): void
    {
        $server = TarantoolServer::start(['listen' => TarantoolServer::UNIX], self::SCHEMA);
        try {
            $c = Client::connect($server->unixUri());
            $this->assertSame(['test'], $c->call('whoami'));
            $this->assertSame([[1, 'x']], [$c->replace('users', [1, 'x'])]);
            $this->assertSame(['guest'], Client::connect($server->socketPath)->call('whoami'));
        } finally {
            $server->stop();
        }
    }

    public function testTcpNoDelayIsOn(): void
    {
        $conn = new Connection(static::$server->uri());
        $conn->connect();
        $socket = \socket_import_stream($conn->stream());
        $this->assertSame(1, \socket_get_option($socket, \SOL_TCP, \TCP_NODELAY));
    }

    public function testConnectionRefusedNamesTheAddress(): void
    {
        $port = TarantoolServer::freePort();
        $this->expectException(ConnectionException::class);
        $this->expectExceptionMessageMatches('~Cannot connect to tcp://127\.0\.0\.1:' . $port . ': .*refused~i');
        Client::connect("tcp://127.0.0.1:$port")->ping();
    }

    public function testNotTarantoolIsAProtocolError(): void
    {
        $fake = new FakeServer("HTTP/1.1 400 Bad Request\r\n" . \str_repeat('x', 200));
        $this->expectException(ProtocolException::class);
        $this->expectExceptionMessage('Not a Tarantool binary-protocol greeting');
        Client::connect($fake->uri())->ping();
    }

    public function testSilentPeerHitsConnectTimeout(): void
    {
        $fake = new FakeServer('');
        $t = \microtime(true);
        try {
            Client::connect($fake->uri(), ['connect_timeout' => 0.3])->ping();
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('No greeting from tcp://127.0.0.1:' . $fake->port, $e->getMessage());
            $this->assertInstanceOf(TimeoutException::class, $e->getPrevious());
        }
        $elapsed = \microtime(true) - $t;
        $this->assertGreaterThanOrEqual(0.29, $elapsed);
        $this->assertLessThan(1.5, $elapsed, 'bounded by connect_timeout, not hanging');
    }

    public function testReadTimeoutClosesSocketSoTheLateReplyIsNeverTakenForTheNextAnswer(): void
    {
        $conn = new Connection(static::$server->uri(), ['read_timeout' => 0.2]);
        $c = new Client($conn);
        $c->ping();
        $generation = $conn->generation();
        $t = \microtime(true);
        try {
            $c->call('slow', [0.5]);
            $this->fail('no exception');
        } catch (TimeoutException $e) {
            $this->assertTrue($e->requestSent);
            $this->assertStringContainsString('No reply within 0.200 s', $e->getMessage());
        }
        $elapsed = \microtime(true) - $t;
        $this->assertGreaterThanOrEqual(0.19, $elapsed);
        $this->assertLessThan(0.45, $elapsed, 'gave up at the read timeout, before the 0.5 s reply');
        $this->assertFalse($conn->isConnected());
        \usleep(400000); // the late reply would have arrived by now
        $this->assertSame(['next'], $c->evaluate("return 'next'"));
        $this->assertSame($generation + 1, $conn->generation());
    }

    /**
     * The message names the request's timeout, not what was left of it when the last read
     * began: writing a large request first uses up part of the 0.2 s.
     */
    public function testTimeoutMessageNamesTheRequestsTimeout(): void
    {
        $c = new Client(new Connection(static::$server->uri(), ['read_timeout' => 0.2]));
        $c->ping();
        try {
            $c->call('slow', [0.5, \str_repeat('x', 8 << 20)]);
            $this->fail('no exception');
        } catch (TimeoutException $e) {
            $this->assertStringContainsString('No reply within 0.200 s', $e->getMessage());
        }
    }

    public function testBrokenConnectionIsReopenedOnTheNextRequest(): void
    {
        $server = TarantoolServer::start([], self::SCHEMA);
        try {
            $conn = new Connection($server->uri(), ['connect_timeout' => 1]);
            $c = new Client($conn);
            $c->replace('users', [1, 'before']);
            $server->kill();
            try {
                $c->select('users', 1);
                $this->fail('no exception');
            } catch (ConnectionException $e) {
                $this->assertFalse($conn->isConnected());
            }
            $server->run(); // same port, fresh process (temporary data is gone)
            $this->assertSame([], $c->select('users', 1));
            $this->assertSame(['test'], $c->call('whoami'), 're-authenticated after reconnect');
            $this->assertSame(2, $conn->generation());
        } finally {
            $server->stop();
        }
    }

    public function testServerDyingMidRequestFailsWithRequestSent(): void
    {
        $server = TarantoolServer::start([], self::SCHEMA);
        try {
            $c = Client::connect($server->uri());
            $c->ping();
            $f = $c->async()->call('slow', [5]);
            $c->async()->ping()->await(); // the slow call is on the wire now
            $server->kill();
            try {
                $f->await();
                $this->fail('no exception');
            } catch (ConnectionException $e) {
                $this->assertTrue($e->requestSent);
                $this->assertStringContainsString('closed by peer', $e->getMessage());
            }
        } finally {
            $server->stop();
        }
    }

    public function testPersistentSocketIsReusedAndStaysAuthenticated(): void
    {
        $uri = static::$server->uri('test:secret') . '?persistent=1';
        $a = new Connection($uri);
        $a->connect();
        $this->assertNotNull($a->greeting());
        $position = \ftell($a->stream());
        unset($a); // as at the end of an FPM request: the socket survives

        $b = new Connection($uri);
        $b->connect();
        $this->assertNull($b->greeting(), 'reused socket: no greeting to read');
        $this->assertSame($position, \ftell($b->stream()));
        $this->assertSame(['test'], (new Client($b))->call('whoami'));

        // Another user never shares that socket.
        $guest = new Connection(static::$server->uri(null) . '?persistent=1');
        $this->assertSame(['guest'], (new Client($guest))->call('whoami'));
        $b->close();
    }

    public function testHalfReadPersistentSocketIsDiscarded(): void
    {
        $uri = static::$server->uri('test:secret') . '?persistent=1';
        $a = new Connection($uri);
        $ca = new Client($a);
        $ca->ping();
        $ca->async()->evaluate("return 'late reply'");
        $a->block($ca->async()->ping()); // both written; only one reply collected at most
        $ca->async()->evaluate("return 'never read'");
        (function () {
            $this->flush(true);
        })->call($a);
        \usleep(100000);
        unset($ca, $a);

        $b = new Connection($uri);
        $cb = new Client($b);
        $this->assertSame(['fresh'], $cb->evaluate("return 'fresh'"));
        $this->assertNotNull($b->greeting(), 'a stale socket was replaced by a new session');
        $b->close();
    }

    public function testDroppedClientClosesItsSocket(): void
    {
        // Sessions are named by id: a count of all connections also moves when an
        // earlier test's socket finishes closing, which made this test flaky.
        $admin = $this->client();
        $ids = [];
        for ($i = 0; $i < 5; $i++) {
            $c = $this->client();
            $ids[] = $c->evaluate('return box.session.id()')[0];
            $c->select('users', 1);
            $c->async()->ping()->await(); // leaves a deferred flush in the (never run) loop
        }
        unset($c);
        $open = static fn () => $admin->evaluate(
            'local n = 0 for _, id in ipairs({...}) do if box.session.exists(id) then n = n + 1 end end return n',
            $ids,
        )[0];
        $this->assertCount(5, \array_unique($ids), 'each client has its own session');
        $deadline = \microtime(true) + 2;
        while ($open() !== 0 && \microtime(true) < $deadline) {
            \usleep(10000);
        }
        $this->assertSame(0, $open(), 'no reference cycle keeps connections open');
    }

    public function testBadUrisAndOptionsAreRejected(): void
    {
        foreach (['http://x:1', 'tcp://nohost', 'unix://relative.sock', 'tcp://h:99999', ''] as $uri) {
            try {
                new Connection($uri);
                $this->fail("accepted $uri");
            } catch (\InvalidArgumentException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
        $this->expectExceptionMessage('Unknown connection option(s) read_timout');
        new Connection('127.0.0.1:3301', ['read_timout' => 1]);
    }
}
