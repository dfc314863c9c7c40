<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Internal\Native\ExtRequest;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;
use PHPUnit\Framework\TestCase;

/**
 * The merge of what PHP collected with a returned Response (php/worker/README.md, "With
 * ext/ferry"), and HttpWorker in this very process when PHPUnit runs with the extension
 * (`make test`'s second run).
 */
final class ExtMergeTest extends TestCase
{
    /** @var array<int, resource> */
    private array $pair = [];

    protected function tearDown(): void
    {
        foreach ($this->pair as $stream) {
            fclose($stream);
        }
        $this->pair = [];
    }

    public function testTheResponseWinsPerHeaderNameCaseInsensitively(): void
    {
        $response = Response::text('r', 202)->header('x-a', 'mine')->cookie('own', '1');
        $merged = ExtRequest::merge($response, [
            'X-A' => ['php'],
            'Content-type' => ['text/html; charset=UTF-8'],
            'X-B' => ['b1', 'b2'],
            'Set-Cookie' => ['php=1', 'own=0'],
        ]);
        self::assertSame(202, $merged->getStatus());
        self::assertSame([
            'Content-Type' => ['text/plain; charset=utf-8'],
            'x-a' => ['mine'],
            'X-B' => ['b1', 'b2'],
            'Set-Cookie' => ['php=1', 'own=0', 'own=1'],
        ], $merged->getHeaders(), 'Set-Cookie: PHP\'s first, so the Response\'s own=1 is the one a browser keeps');
        self::assertSame(['Content-Type' => ['text/plain; charset=utf-8'], 'x-a' => ['mine'], 'Set-Cookie' => ['own=1']], $response->getHeaders(), 'the returned object is left as it was');
        self::assertSame($response, ExtRequest::merge($response, []), 'nothing collected: no copy');
    }

    public function testPhpCookiesAloneAreKept(): void
    {
        $merged = ExtRequest::merge(new Response(204), ['Set-Cookie' => ['a=1']]);
        self::assertSame(['Set-Cookie' => ['a=1']], $merged->getHeaders());
    }

    public function testTheMakeTestRunWithTheExtensionHasIt(): void
    {
        if (getenv('FERRY_TEST_EXT') !== '1') {
            self::assertTrue(true, 'only checked in the run that loads the extension');

            return;
        }
        self::assertTrue(\extension_loaded('ferry'), 'FERRY_TEST_EXT=1 but PHPUnit runs without ext/ferry');
        self::assertTrue((new HttpWorker($this->worker()))->usesExtension());
    }

    public function testInProcessHandlerGetsPhpHeadersWithTheExtension(): void
    {
        $http = new HttpWorker($this->worker());
        if (!$http->usesExtension()) {
            // PHPUnit has printed by now: without the extension header() only warns here.
            self::markTestSkipped('PHPUnit runs without ext/ferry (make test runs it with it too)');
        }
        $payload = new Payload('', HttpRequestTest::context(), 1);
        $capture = new SyncCapture();
        $job = new Job($payload, $capture);
        $capture->begin($job);
        try {
            $answer = $http->handle(static function (Request $r): string {
                header('X-In-Process: 1');
                http_response_code(203);

                return 'x';
            }, $payload, $job);
        } finally {
            $capture->end($job);
        }
        $meta = json_decode($answer->context, true, 8, JSON_THROW_ON_ERROR);
        self::assertSame([203, ['1']], [$meta['status'], $meta['headers']['X-In-Process'] ?? null]);
        self::assertFalse(\Ferry\Ext\in_request());
        self::assertSame(200, http_response_code(), 'reset for the next request');
    }

    private function worker(): Worker
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);

        return new Worker(new StreamRelay($this->pair[0], $this->pair[0]));
    }
}
