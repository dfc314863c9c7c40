<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ReadOnlyException;
use Ferry\Tarantool\Middleware\AuthMiddleware;
use Ferry\Tarantool\Middleware\Logger;
use Ferry\Tarantool\Middleware\LoggingMiddleware;
use Ferry\Tarantool\Middleware\ReadOnlyFirewall;
use Ferry\Tarantool\Middleware\RetryMiddleware;
use Ferry\Tarantool\Tests\Support\TarantoolServer;

final class MiddlewareTest extends TarantoolTestCase
{
    public function testRetryWaitsForTheServerToComeBack(): void
    {
        $server = TarantoolServer::start([], self::SCHEMA);
        try {
            $c = Client::connect($server->uri(), ['connect_timeout' => 0.5])
                ->withMiddleware(new RetryMiddleware(maxRetries: 30, baseDelay: 0.02, maxDelay: 0.1));
            $c->ping();
            $server->kill();
            // Read-only, so retried even though the first attempt went out on the dead socket.
            $ping = Scheduler::spawn(static fn () => $c->select('users', [], iterator: 'ALL'));
            Scheduler::spawn(static function () use ($server) {
                Scheduler::sleep(0.2); // the client is failing and backing off meanwhile
                $server->run();
            });
            Loop::get()->run();
            $this->assertSame([], $ping->await());
            $this->assertSame(['test'], $c->call('whoami'));
        } finally {
            $server->stop();
        }
    }

    public function testRetryGivesUpAndNeverReplaysASentWrite(): void
    {
        $port = TarantoolServer::freePort();
        $t = \microtime(true);
        $c = Client::connect("tcp://127.0.0.1:$port")->withMiddleware(new RetryMiddleware(2, 0.05, jitter: false));
        try {
            $c->ping();
            $this->fail('no exception');
        } catch (ConnectionException) {
        }
        $this->assertGreaterThan(0.14, \microtime(true) - $t, 'two backoffs: 0.05 + 0.1');

        $server = TarantoolServer::start([], self::SCHEMA);
        try {
            $c = Client::connect($server->uri())->withMiddleware(new RetryMiddleware(5, 0.01));
            $c->evaluate("box.space.users:replace{1, 'a', 0}");
            $calls = Scheduler::spawn(static fn () => $c->call('slow', [2]));
            Scheduler::spawn(static function () use ($server) {
                Scheduler::sleep(0.1);
                $server->kill();
                $server->run();
            });
            Loop::get()->run();
            try {
                $calls->await();
                $this->fail('a CALL in flight when the connection broke must not be replayed');
            } catch (ConnectionException $e) {
                $this->assertTrue($e->requestSent);
            }
        } finally {
            $server->stop();
        }
    }

    public function testAuthMiddlewareReauthenticatesAfterReconnect(): void
    {
        $conn = new Connection(static::$server->uri(null));
        $c = (new Client($conn))->withMiddleware(new AuthMiddleware($conn, 'test', 'secret'));
        $this->assertSame(['test'], $c->call('whoami'));
        $conn->close();
        $this->assertSame(['test'], $c->call('whoami'));
        $this->assertSame(2, $conn->generation());
        // AUTH switched the session itself; without the middleware a new session stays guest.
        $this->assertSame(['test'], (new Client($conn))->evaluate('return box.session.user()'));
        $this->assertSame(['guest'], (new Client(new Connection(static::$server->uri(null))))->call('whoami'));
    }

    public function testReadOnlyFirewall(): void
    {
        $c = $this->client()->withMiddleware(new ReadOnlyFirewall(['whoami']));
        $c->ping();
        $c->select('users', [], iterator: 'ALL');
        $this->assertSame(1, $c->execute('SELECT 1 AS "one"')->first()['one']);
        $this->assertSame(['test'], $c->call('whoami'));
        $refused = [
            fn () => $c->insert('users', [500, 'x']),
            fn () => $c->replace('users', [500, 'x']),
            fn () => $c->update('users', 1, [['=', 2, 'x']]),
            fn () => $c->upsert('users', [500, 'x'], [['=', 2, 'y']]),
            fn () => $c->delete('users', 1),
            fn () => $c->call('multi'),
            fn () => $c->evaluate('return 1'),
            fn () => $c->execute('/* hi */ DELETE FROM "users"'),
            fn () => $c->execute('WITH t AS (SELECT 1) INSERT INTO "users" VALUES (1, \'x\', 0, NULL)'),
        ];
        foreach ($refused as $i => $f) {
            try {
                $f();
                $this->fail("request #$i passed the firewall");
            } catch (ReadOnlyException $e) {
                $this->assertStringStartsWith('Refused by the read-only firewall: ', $e->getMessage());
            }
        }
        $this->assertSame([], $this->client()->select('users', 500), 'nothing reached the server');
    }

    public function testLoggingWithATinyLoggerAndWithPsr3(): void
    {
        $logger = new class () implements Logger {
            public array $lines = [];

            public function log($level, string|\Stringable $message, array $context = []): void
            {
                $this->lines[] = [$level, \strtr((string) $message, ['{request}' => $context['request'], '{code}' => (string) ($context['code'] ?? '')])];
            }
        };
        $c = $this->client()->withMiddleware(new LoggingMiddleware($logger, slowSeconds: 0.1));
        $c->ping();
        $c->call('slow', [0.12]);
        try {
            $c->evaluate("error('bad')");
        } catch (\Throwable) {
        }
        $this->assertSame(['debug', 'Tarantool PING took {duration_ms} ms'], $logger->lines[0]);
        $this->assertSame(['warning', 'Slow Tarantool request CALL slow took {duration_ms} ms'], $logger->lines[1]);
        $this->assertSame('error', $logger->lines[2][0]);
        $this->assertStringStartsWith("Tarantool EVAL error('bad') failed with error 32: ", $logger->lines[2][1]);

        require_once '/usr/share/php/Psr/Log/autoload.php';
        $psr = new class () extends \Psr\Log\AbstractLogger {
            public array $levels = [];

            public function log($level, $message, array $context = array()): void
            {
                $this->levels[] = $level;
            }
        };
        $this->client()->withMiddleware(new LoggingMiddleware($psr, 'info'))->ping();
        $this->assertSame(['info'], $psr->levels);

        $this->expectException(\InvalidArgumentException::class);
        new LoggingMiddleware(new \stdClass());
    }

    public function testMiddlewareOrder(): void
    {
        $seen = [];
        $mw = static function (string $name) use (&$seen) {
            return new class ($name, $seen) implements \Ferry\Tarantool\Middleware\Middleware {
            public function __construct(private string $name, private array &$seen)
            {
            }

            public function process(\Ferry\Tarantool\Protocol\Request $request, \Ferry\Tarantool\Handler $next): \Ferry\Tarantool\Protocol\Response
            {
                $this->seen[] = $this->name . '>' . $request->typeName();
                $r = $next->handle($request);
                $this->seen[] = '<' . $this->name;
                return $r;
            }
            };
        };
        $this->client(['middleware' => [$mw('outer'), $mw('inner')]])->ping();
        $this->assertSame(['outer>PING', 'inner>PING', '<inner', '<outer'], $seen);
    }
}
