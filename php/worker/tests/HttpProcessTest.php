<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * HttpWorker and the examples as real processes, fed serialized contexts like the gateway.
 */
final class HttpProcessTest extends TestCase
{
    private const FIXTURE = __DIR__ . '/fixtures/http-worker.php';
    private const EXAMPLES = __DIR__ . '/../../../examples/hello';

    public function testRequestsAreAnsweredWithStatusHeadersAndBody(): void
    {
        $worker = new WorkerProcess(self::FIXTURE, [], 'unix');
        $worker->handshake();
        $worker->send(Http::job(1, '/hello?name=Ferry') . Http::job(2, '/echo') . Http::job(3, '/missing'));
        $answers = array_map(Http::answer(...), $worker->readFrames(3));

        self::assertSame(
            ['id' => 1, 'status' => 200, 'headers' => ['Content-Type' => ['text/plain; charset=utf-8']], 'body' => 'Hello Ferry'],
            $answers[0]
        );
        self::assertSame(202, $answers[1]['status']);
        self::assertSame(['a', 'b'], $answers[1]['headers']['X-Multi']);
        self::assertSame(['sid=v%201; path=/'], $answers[1]['headers']['Set-Cookie']);
        self::assertSame('echoed;printedbody;', $answers[1]['body']);
        self::assertSame([3, 404, 'not found: /missing'], [$answers[2]['id'], $answers[2]['status'], $answers[2]['body']]);
    }

    public function testUncaughtExceptionIsA500AndTheWorkerGoesOn(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $worker->send(Http::job(1, '/boom') . Http::job(2, '/hello'));
        [$boom, $hello] = array_map(Http::answer(...), $worker->readFrames(2));
        self::assertSame([500, "Internal Server Error\n"], [$boom['status'], $boom['body']]);
        self::assertSame([200, 'Hello world'], [$hello['status'], $hello['body']]);
        self::assertStringContainsString('request 1 failed: RuntimeException: handler exploded', $worker->stderr());
    }

    public function testDebugModeShowsTheException(): void
    {
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_DEBUG' => '1']);
        $worker->handshake();
        $worker->send(Http::job(1, '/boom'));
        $boom = Http::answer($worker->readFrames(1)[0]);
        self::assertSame(500, $boom['status']);
        self::assertStringStartsWith('RuntimeException: handler exploded in ' . realpath(self::FIXTURE), $boom['body']);
        self::assertStringNotContainsString('lost output', $boom['body']);
    }

    public function testFormsThroughTheProcess(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $worker->send(
            Http::job(1, '/form', ['method' => 'POST', 'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']]], 'a[]=1&a[]=2&b=x')
            . Http::job(2, '/form', [
                'method' => 'POST',
                'headers' => ['Content-Type' => ['multipart/form-data; boundary=q']],
                'form' => [['m[k]', 'v']],
                'files' => [['up[]', 'f.txt', 'text/plain', '/tmp/x', 0, 3]],
                'parsed' => true,
            ])
        );
        [$urlencoded, $multipart] = array_map(Http::answer(...), $worker->readFrames(2));
        self::assertSame(['post' => ['a' => ['1', '2'], 'b' => 'x'], 'files' => [], 'method' => 'POST'], json_decode($urlencoded['body'], true));
        $decoded = json_decode($multipart['body'], true);
        self::assertSame(['m' => ['k' => 'v']], $decoded['post']);
        self::assertSame(['f.txt'], $decoded['files']['up']['name']);
        self::assertSame([3], $decoded['files']['up']['size']);
    }

    public function testResetHookRunsAfterEachRequest(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $worker->send(Http::job(1, '/hello') . Http::job(2, '/boom') . Http::job(3, '/state'));
        $state = Http::answer($worker->readFrames(3)[2]);
        // Two earlier requests were reset; the scratch list only holds the current one.
        self::assertSame(['requests' => 3, 'resets' => 2, 'scratch' => ['/state']], json_decode($state['body'], true));
    }

    public function testHelloExample(): void
    {
        $worker = new WorkerProcess(self::EXAMPLES . '/worker.php');
        $worker->handshake();
        $worker->send(Http::job(1, '/'));
        $answer = Http::answer($worker->readFrames(1)[0]);
        self::assertSame([200, ['text/plain; charset=utf-8'], "Hello, world\n"], [$answer['status'], $answer['headers']['Content-Type'], $answer['body']]);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
    }

    public function testPsr7Example(): void
    {
        $worker = new WorkerProcess(self::EXAMPLES . '/psr7.php', [], 'tcp');
        $worker->handshake();
        $worker->send(Http::job(1, '/'));
        $answer = Http::answer($worker->readFrames(1)[0]);
        self::assertSame([200, ['text/plain; charset=utf-8'], "Hello, world\n"], [$answer['status'], $answer['headers']['Content-Type'], $answer['body']]);
        $worker->sendStop();
        self::assertSame(0, $worker->wait());
        self::assertSame('', $worker->stderr());
    }
}
