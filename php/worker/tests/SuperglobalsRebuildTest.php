<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;
use PHPUnit\Framework\TestCase;

/**
 * Globals mode rebuilds $_SERVER and $_ENV twice per request: from the process's own at
 * its start (HttpWorker::populateGlobals(), Superglobals::fill()) and back to them at its
 * end (HttpWorker::reset()). Either alone hides the other from a test that only looks at
 * the next request, so each is pinned here on its own: the start by what code between two
 * requests writes (a terminate hook runs after the end's reset), the end by what that code
 * finds. In-process, so `make test` runs it pure PHP and with ext/ferry loaded (requests
 * then go through ExtRequest).
 */
final class SuperglobalsRebuildTest extends TestCase
{
    /** @var array<int, resource> */
    private array $pair = [];
    /** @var array<string, mixed> */
    private array $server;
    /** @var array<string, mixed> */
    private array $env;

    protected function setUp(): void
    {
        $this->server = $_SERVER;
        $this->env = $_ENV;
        $_SERVER['X_BOOT'] = 'server at boot';
        $_ENV['X_BOOT'] = 'env at boot';
    }

    protected function tearDown(): void
    {
        foreach ($this->pair as $stream) {
            fclose($stream);
        }
        $_SERVER = $this->server;
        $_ENV = $this->env;
        $_GET = $_POST = $_COOKIE = $_FILES = $_REQUEST = [];
    }

    private function http(): HttpWorker
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);

        return new HttpWorker(new Worker(new StreamRelay($this->pair[0], $this->pair[0])), globals: true);
    }

    private static function call(HttpWorker $http, \Closure $handler): void
    {
        $payload = new Payload('', HttpRequestTest::context(), 1);
        $capture = new SyncCapture();
        $job = new Job($payload, $capture);
        $capture->begin($job);
        try {
            $http->handle($handler, $payload, $job);
        } finally {
            $capture->end($job);
        }
    }

    /** @return array{mixed, mixed, mixed, mixed, mixed} what a request sees of both */
    private static function seen(): array
    {
        return [$_SERVER['X'] ?? null, $_ENV['X'] ?? null, $_SERVER['X_BOOT'] ?? null, $_ENV['X_BOOT'] ?? null, $_SERVER['REQUEST_METHOD'] ?? null];
    }

    public function testEachRequestStartsFromTheProcessServerAndEnv(): void
    {
        $http = $this->http();
        self::call($http, static fn (): string => '');
        // What a terminate hook, or a loop of one's own, writes after the request's reset.
        $_SERVER['X'] = 'between requests';
        $_ENV['X'] = 'between requests';
        $seen = null;
        self::call($http, static function () use (&$seen): string {
            $seen = self::seen();

            return '';
        });
        self::assertSame([null, null, 'server at boot', 'env at boot', 'GET'], $seen);
    }

    public function testEachRequestLeavesTheProcessServerAndEnvBehind(): void
    {
        $http = $this->http();
        $seen = null;
        self::call($http, static function () use (&$seen): string {
            $_SERVER['X'] = 'written by the request';
            $_ENV['X'] = 'written by the request';
            $seen = self::seen();

            return '';
        });
        self::assertSame(['written by the request', 'written by the request', 'server at boot', 'env at boot', 'GET'], $seen);
        // What the terminate hooks find, and the next request starts over.
        self::assertSame([null, null, 'server at boot', 'env at boot', null], self::seen());
    }
}
