<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * Process-wide PHP state a request can change (response code, header() calls,
 * superglobals), seen across several requests served by one real worker process.
 */
final class HttpStateProcessTest extends TestCase
{
    private const FIXTURE = __DIR__ . '/fixtures/http-state-worker.php';

    /** @var list<string> */
    private array $dirs = [];

    protected function tearDown(): void
    {
        foreach ($this->dirs as $dir) {
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
        }
    }

    public function testResponseCodeIsHonouredForStringsAndArraysAndResetAfterEachRequest(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $paths = ['/code', '/not-found', '/code', '/not-found-json', '/not-found-response', '/code'];
        $jobs = '';
        foreach ($paths as $i => $path) {
            $jobs .= Http::job($i + 1, $path);
        }
        $worker->send($jobs);
        $answers = array_map(Http::answer(...), $worker->readFrames(\count($paths)));

        $seen = array_map(static fn (array $a): array => [$a['status'], $a['body']], $answers);
        self::assertSame([
            [200, '{"code":200}'],    // as under FPM: 200 before anything sets it
            [404, 'missing'],
            [200, '{"code":200}'],    // the 404 of the request before is gone
            [410, '{"gone":true}'],
            [201, 'explicit'],        // a returned Response keeps its own status
            [200, '{"code":200}'],
        ], $seen);
        self::assertSame(['text/html; charset=utf-8'], $answers[1]['headers']['Content-Type']);
        self::assertStringNotContainsString('warning', $worker->stderr(), 'a status alone loses nothing');
    }

    public function testResponseCodeIsIgnoredInFiberMode(): void
    {
        // Concurrent requests share the one code: honouring it could answer with another
        // request's status.
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_FIBERS' => '1']);
        $worker->handshake();
        $worker->send(Http::job(1, '/not-found') . Http::job(2, '/not-found'));
        $answers = array_map(Http::answer(...), $worker->readFrames(2));
        self::assertSame([200, 200], array_column($answers, 'status'));
        self::assertSame(1, substr_count($worker->stderr(), 'warning: http_response_code(404) was called in Fiber mode'), $worker->stderr());
    }

    public function testHeaderFunctionsAreReportedOncePerWorker(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $worker->send(Http::job(1, '/cookie') . Http::job(2, '/redirect') . Http::job(3, '/redirect') . Http::job(4, '/code'));
        [$cookie, $first, $second, $code] = array_map(Http::answer(...), $worker->readFrames(4));

        $stderr = $worker->stderr();
        self::assertSame(1, substr_count($stderr, 'warning: '), "one warning expected, stderr: $stderr");
        self::assertStringContainsString("status 302 was set through PHP, as header('Location: ...') does", $stderr);
        self::assertStringContainsString('return a Response and use its header(), addHeader(), cookie(), or Response::redirect()', $stderr);
        self::assertSame([200, 'cookie'], [$cookie['status'], $cookie['body']]);
        // The status header('Location: ...') sets is kept; the header itself cannot be.
        self::assertSame([302, 302], [$first['status'], $second['status']]);
        self::assertArrayNotHasKey('Location', $first['headers']);
        self::assertSame('{"code":200}', $code['body']);
    }

    public function testNothingWrittenIntoSuperglobalsReachesTheNextRequest(): void
    {
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_TEST_GLOBALS' => '1']);
        $worker->handshake();
        $worker->send(
            Http::job(1, '/globals?q=1', ['method' => 'POST', 'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']]], 'p=2')
            . Http::job(2, '/globals', ['cookies' => []])
        );
        [$first, $second] = array_map(static fn ($f): array => json_decode(Http::answer($f)['body'], true), $worker->readFrames(2));

        self::assertSame([
            'server_x' => null,
            'server_boot' => 'boot',
            'method' => 'GET',
            'env' => ['FROM_BOOT' => 'boot'],
            'get' => [],
            'post' => [],
            'cookie' => [],
            'files' => [],
            'request' => [],
        ], $second, 'request 1 wrote into every superglobal: request 2 must see none of it');
        self::assertSame(['POST', ['q' => '1'], ['p' => '2'], 'boot'], [$first['method'], $first['get'], $first['post'], $first['server_boot']]);
        self::assertSame(['FROM_BOOT' => 'boot'], $first['env'], 'what the bootstrap put in $_ENV and $_SERVER is kept');
    }

    /**
     * Without globals mode the superglobals are not the request's, but what a request writes
     * into them must still not reach the next one, $_ENV included (FPM starts every request
     * with fresh ones): a $_ENV['X'] one request sets is no other user's to read.
     */
    public function testNothingWrittenIntoSuperglobalsReachesTheNextRequestWithoutGlobalsMode(): void
    {
        $worker = new WorkerProcess(self::FIXTURE);
        $worker->handshake();
        $worker->send(Http::job(1, '/globals') . Http::job(2, '/globals'));
        [, $second] = array_map(static fn ($f): array => json_decode(Http::answer($f)['body'], true), $worker->readFrames(2));

        self::assertSame(
            ['server_x' => null, 'server_boot' => 'boot', 'env' => ['FROM_BOOT' => 'boot'], 'get' => [], 'post' => [],
                'cookie' => [], 'files' => [], 'request' => []],
            array_diff_key($second, ['method' => true]),
            'request 1 wrote into every superglobal: request 2 must see none of it',
        );
    }

    /**
     * A terminate hook runs after its request's superglobals were put back: what it
     * writes into $_SERVER and $_ENV is gone only because the next request rebuilds both
     * from the process's own (the in-process half is SuperglobalsRebuildTest).
     */
    public function testWhatATerminateHookWritesIntoServerAndEnvIsNotTheNextRequests(): void
    {
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_TEST_GLOBALS' => '1']);
        $worker->handshake();
        $worker->send(Http::job(1, '/write-after-answer'));
        // The answer, then {"finished":true} once the hook has run.
        [$answer, $finished] = $worker->readFrames(2);
        self::assertSame(['hook added', '{"finished":true}'], [Http::answer($answer)['body'], $finished->payload]);
        $worker->send(Http::job(2, '/globals'));
        $seen = json_decode(Http::answer($worker->readFrames(1)[0])['body'], true);
        self::assertSame([null, 'boot', ['FROM_BOOT' => 'boot']], [$seen['server_x'], $seen['server_boot'], $seen['env']]);
    }

    public function testRequestMergesGetAndPostAsPhpDoes(): void
    {
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_TEST_GLOBALS' => '1']);
        $worker->handshake();
        $worker->send(Http::job(1, '/globals?a[x]=1&b=get', [
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
            'cookies' => ['b' => 'cookie', 'c' => '3'],
        ], 'a[y]=2&b=post'));
        $seen = json_decode(Http::answer($worker->readFrames(1)[0])['body'], true);
        // request_order "GP" (php.ini's): POST wins, arrays merge, cookies stay out.
        self::assertSame(['a' => ['x' => '1', 'y' => '2'], 'b' => 'post'], $seen['request']);
    }

    public function testRequestFollowsRequestOrder(): void
    {
        $dir = sys_get_temp_dir() . '/ferry-ini-' . bin2hex(random_bytes(6));
        mkdir($dir);
        $this->dirs[] = $dir;
        file_put_contents("$dir/order.ini", "request_order=CPG\n");
        // A leading separator keeps the default scan directory and adds this one.
        $worker = new WorkerProcess(self::FIXTURE, ['FERRY_TEST_GLOBALS' => '1', 'PHP_INI_SCAN_DIR' => PATH_SEPARATOR . $dir]);
        $worker->handshake();
        $worker->send(Http::job(1, '/globals?a[x]=1&b=get', [
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
            'cookies' => ['b' => 'cookie', 'c' => '3'],
        ], 'a[y]=2&b=post'));
        $seen = json_decode(Http::answer($worker->readFrames(1)[0])['body'], true);
        self::assertSame(['b' => 'get', 'c' => '3', 'a' => ['y' => '2', 'x' => '1']], $seen['request']);
    }

    public function testPsr7WorkerHasAGlobalsMode(): void
    {
        $worker = new WorkerProcess(__DIR__ . '/fixtures/http-psr7-globals.php');
        $worker->handshake();
        $worker->send(Http::job(1, '/p?q=1') . Http::job(2, '/p'));
        [$first, $second] = array_map(static fn ($f): array => json_decode(Http::answer($f)['body'], true), $worker->readFrames(2));
        self::assertSame(['get' => ['q' => '1'], 'psr' => ['q' => '1'], 'uri' => '/p?q=1'], $first);
        self::assertSame(['get' => [], 'psr' => [], 'uri' => '/p'], $second);
    }
}
