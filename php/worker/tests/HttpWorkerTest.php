<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;
use PHPUnit\Framework\TestCase;

/**
 * HttpWorker::handle() in-process, with a job captured exactly as Worker::run() does it.
 */
final class HttpWorkerTest extends TestCase
{
    /** @var array<int, resource> */
    private array $pair = [];
    /** @var list<string> */
    private array $log = [];

    protected function setUp(): void
    {
        Worker::setLogger(function (string $message): void {
            $this->log[] = $message;
        });
    }

    protected function tearDown(): void
    {
        Worker::setLogger(null);
        foreach ($this->pair as $stream) {
            fclose($stream);
        }
        $_GET = $_POST = $_COOKIE = $_FILES = $_REQUEST = [];
    }

    private function worker(bool $fibers = false): Worker
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);

        return new Worker(new StreamRelay($this->pair[0], $this->pair[0]), $fibers);
    }

    /**
     * @return array{int, array<string, list<string>>, string}
     */
    private static function call(HttpWorker $http, callable $handler, string $context = '', string $body = ''): array
    {
        $payload = new Payload($body, $context === '' ? HttpRequestTest::context() : $context, 1);
        $capture = new SyncCapture();
        $job = new Job($payload, $capture);
        $capture->begin($job);
        try {
            $answer = $http->handle($handler(...), $payload, $job);
        } finally {
            $capture->end($job);
        }
        $meta = json_decode($answer->context, true, 8, JSON_THROW_ON_ERROR);

        return [$meta['status'], $meta['headers'], $answer->body];
    }

    public function testResponseObject(): void
    {
        [$status, $headers, $body] = self::call(new HttpWorker($this->worker()), static fn (Request $r) => Response::text("path={$r->path}", 203));
        self::assertSame(203, $status);
        self::assertSame(['Content-Type' => ['text/plain; charset=utf-8']], $headers);
        self::assertSame('path=/shop/items', $body);
    }

    public function testStringAndArrayResults(): void
    {
        $http = new HttpWorker($this->worker());
        [$status, $headers, $body] = self::call($http, static fn () => '<p>hi</p>');
        self::assertSame([200, ['text/html; charset=utf-8'], '<p>hi</p>'], [$status, $headers['Content-Type'], $body]);
        [$status, $headers, $body] = self::call($http, static fn (Request $r) => ['q' => $r->query()['id']]);
        self::assertSame([200, ['application/json'], '{"q":"5"}'], [$status, $headers['Content-Type'], $body]);
    }

    public function testEchoedOutputPrecedesTheBodyWithoutTouchingTheResponseObject(): void
    {
        $shared = Response::html('<h1>');
        $http = new HttpWorker($this->worker());
        $handler = static function () use ($shared): Response {
            echo 'printed';
            ob_start();
            echo '+nested';

            return $shared;
        };
        self::assertSame('printed+nested<h1>', self::call($http, $handler)[2]);
        self::assertSame('printed+nested<h1>', self::call($http, $handler)[2], 'output of request 1 leaked into request 2');
        self::assertSame('<h1>', $shared->body);
    }

    public function testExceptionGivesAGeneric500(): void
    {
        $http = new HttpWorker($this->worker());
        [$status, $headers, $body] = self::call($http, static function (): never {
            echo 'partial page';
            throw new \DomainException('secret detail');
        });
        self::assertSame(500, $status);
        self::assertSame("Internal Server Error\n", $body);
        self::assertSame(['text/plain; charset=utf-8'], $headers['Content-Type']);
        self::assertCount(1, $this->log);
        self::assertStringStartsWith('request 1 failed: DomainException: secret detail in ' . __FILE__, $this->log[0]);
        self::assertStringContainsString('#0 ', $this->log[0], 'trace logged');
    }

    public function testDebugPutsDetailsInThe500Body(): void
    {
        $http = new HttpWorker($this->worker(), debug: true);
        [$status, , $body] = self::call($http, static fn () => throw new \DomainException('secret detail'));
        self::assertSame(500, $status);
        self::assertStringStartsWith('DomainException: secret detail in ' . __FILE__, $body);
    }

    public function testWrongReturnTypeAndBadContextAre500s(): void
    {
        $http = new HttpWorker($this->worker(), debug: true);
        [$status, , $body] = self::call($http, static fn () => 42);
        self::assertSame(500, $status);
        self::assertStringContainsString('must return Response, string or array, got int', $body);
        [$status, , $body] = self::call($http, static fn () => 'x', 'garbage');
        self::assertSame(500, $status);
        self::assertStringContainsString('ProtocolException', $body);
    }

    public function testResetHooksRunAfterEveryRequestInOrder(): void
    {
        $http = new HttpWorker($this->worker());
        $log = [];
        $http->onReset(static function () use (&$log): void {
            $log[] = 'first';
        })->onReset(static function () use (&$log): void {
            $log[] = 'second';
        });
        self::call($http, static function () use (&$log): string {
            $log[] = 'handler';

            return 'ok';
        });
        self::call($http, static fn () => throw new \RuntimeException('x'));
        self::assertSame(['handler', 'first', 'second', 'first', 'second'], $log);
    }

    public function testFailingResetHookStopsTheWorkerAfterAnswering(): void
    {
        $worker = $this->worker();
        $http = new HttpWorker($worker);
        $http->onReset(static fn () => throw new \LogicException('cannot reset'));
        [$status, , $body] = self::call($http, static fn () => 'still answered');
        self::assertSame([200, 'still answered'], [$status, $body]);
        self::assertTrue($worker->isStopping());
        self::assertCount(1, $this->log);
        self::assertStringStartsWith('reset hook failed, stopping this worker: LogicException: cannot reset in ' . __FILE__, $this->log[0]);
    }

    public function testGlobalsModeFillsAndClearsSuperglobals(): void
    {
        $http = new HttpWorker($this->worker(), globals: true);
        $seen = [];
        $context = HttpRequestTest::context([
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
        ]);
        $base = $_SERVER['SCRIPT_NAME'] ?? null;
        self::call($http, static function () use (&$seen): string {
            $seen = [$_GET['id'], $_POST['p'], $_COOKIE['a'], $_REQUEST['p'], $_SERVER['REQUEST_METHOD'], $_SERVER['SCRIPT_NAME'] ?? null];

            return '';
        }, $context, 'p=posted');
        self::assertSame(['5', 'posted', '1', 'posted', 'POST', $base], $seen);
        self::assertSame([[], [], [], []], [$_GET, $_POST, $_COOKIE, $_REQUEST]);
        self::assertArrayNotHasKey('REQUEST_METHOD', $_SERVER);
    }

    public function testSuperglobalsWrittenByARequestAreGoneForTheNext(): void
    {
        foreach ([false, true] as $fibers) {
            $_SERVER['X_BOOT'] = 'kept';
            $http = new HttpWorker($this->worker($fibers));
            self::call($http, static function (): string {
                $_SERVER['X_LEAK'] = 'a';
                $_GET['leak'] = $_POST['leak'] = $_COOKIE['leak'] = $_REQUEST['leak'] = 1;
                $_FILES['leak'] = ['name' => 'x'];

                return '';
            });
            $seen = null;
            self::call($http, static function () use (&$seen): string {
                $seen = [$_SERVER['X_LEAK'] ?? null, $_SERVER['X_BOOT'] ?? null, $_GET, $_POST, $_COOKIE['leak'] ?? null, $_FILES, $_REQUEST];

                return '';
            });
            self::assertSame([null, 'kept', [], [], null, [], []], $seen, $fibers ? 'fibers' : 'sequential');
            unset($_SERVER['X_BOOT'], $_SERVER['X_LEAK']);
            fclose($this->pair[0]);
            fclose($this->pair[1]);
            $this->pair = [];
        }
    }

    public function testGlobalsModeIsRefusedWithFibers(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new HttpWorker($this->worker(fibers: true), globals: true);
    }
}
