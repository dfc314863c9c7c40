<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Tests\Support\ExtIni;
use Ferry\Worker\Tests\Support\Http;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * HttpWorker in a real worker process with ext/ferry loaded (php/worker/README.md, "With
 * ext/ferry"): PHP's header functions, status, sessions and uploads reach the answer,
 * merged with a returned Response, and nothing of one request reaches the next. Runs in
 * both PHPUnit runs of `make test`: the worker gets the extension through its own ini
 * scan directory, whatever PHPUnit itself loaded.
 */
final class ExtWorkerProcessTest extends TestCase
{
    private const FIXTURE = __DIR__ . '/fixtures/ext-worker.php';

    private string $sessions = '';

    protected function setUp(): void
    {
        ExtIni::scanDir();
        $this->sessions = sys_get_temp_dir() . '/ferry-sessions-' . bin2hex(random_bytes(6));
        mkdir($this->sessions);
    }

    protected function tearDown(): void
    {
        if ($this->sessions !== '') {
            array_map('unlink', glob($this->sessions . '/*') ?: []);
            rmdir($this->sessions);
        }
    }

    /**
     * @param array<string, string> $env
     */
    private function worker(array $env = []): WorkerProcess
    {
        $worker = new WorkerProcess(self::FIXTURE, $env + [
            'PHP_INI_SCAN_DIR' => ExtIni::scanDir(),
            'FERRY_TEST_SESSIONS' => $this->sessions,
        ]);
        // WorkerProcess::handshake() with a timeout a valgrind run can meet.
        $worker->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()])));
        self::assertSame(Frame::CONTROL | Frame::JSON, $worker->readFrames(1, self::timeout())[0]->flags);

        return $worker;
    }

    /**
     * @param list<array{0: string, 1?: array<string, mixed>}> $requests path and context overrides
     * @return list<array{status: int, reason: string|null, headers: array<string, list<string>>, body: string}>
     */
    private static function serve(WorkerProcess $worker, array $requests): array
    {
        $jobs = '';
        foreach ($requests as $i => $r) {
            $jobs .= Http::job($i + 1, $r[0], $r[1] ?? []);
        }
        $worker->send($jobs);

        return array_map(static function (Frame $frame): array {
            self::assertSame(Frame::CODEC_RAW, $frame->flags, $frame->payload);
            $meta = json_decode(substr($frame->payload, 0, $frame->options[0]), true, 8, JSON_THROW_ON_ERROR);

            return ['status' => $meta['status'], 'reason' => $meta['reason'] ?? null, 'headers' => $meta['headers'], 'body' => substr($frame->payload, $frame->options[0])];
        }, $worker->readFrames(\count($requests), self::timeout()));
    }

    /** Seconds to wait for a worker; memcheck_sdk.sh runs them under valgrind. */
    private static function timeout(): float
    {
        return (float) (getenv('FERRY_TEST_TIMEOUT') ?: 10);
    }

    public function testPhpHeadersStatusAndCookiesMakeTheAnswer(): void
    {
        $worker = $this->worker();
        [$mode, $headers, $json, $location, $state] = self::serve($worker, [['/mode'], ['/headers'], ['/json'], ['/location'], ['/state']]);

        self::assertSame(['ext' => true, 'fibers' => false], json_decode($mode['body'], true));
        self::assertSame(201, $headers['status']);
        self::assertSame('body', $headers['body']);
        self::assertSame([
            'Content-Type' => ['text/html; charset=utf-8'], // the SDK's, as without the extension
            'X-A' => ['1', '2'],
            'Set-Cookie' => ['c=v%20w', 'r=x'],
        ], $headers['headers']);

        self::assertSame([422, ['error' => 1]], [$json['status'], json_decode($json['body'], true)]);
        self::assertSame(['application/problem+json'], $json['headers']['Content-Type']);
        self::assertSame('Not Like That', $json['reason']);

        self::assertSame(302, $location['status'], 'PHP\'s rule: Location without a status is a 302');
        self::assertSame(['/elsewhere'], $location['headers']['Location']);

        self::assertSame(['code' => 200, 'list' => self::poweredBy(), 'session' => PHP_SESSION_NONE], json_decode($state['body'], true), 'nothing of the earlier requests is left');
        self::assertStringNotContainsString('warning', $worker->stderr());
    }

    public function testAReturnedResponseWinsOnStatusAndOnEachHeaderItSets(): void
    {
        $worker = $this->worker();
        [$first, $second] = self::serve($worker, [['/response'], ['/response']]);
        foreach ([$first, $second] as $answer) {
            self::assertSame(202, $answer['status']);
            self::assertSame('shared', $answer['body']);
            self::assertSame([
                'Content-Type' => ['text/plain; charset=utf-8'],
                'X-Mine' => ['response'],
                'X-From-Php' => ['php'],
                'Set-Cookie' => ['php=1'],
            ], $answer['headers'], 'the same Response object returned twice carries no header of the request before');
        }
    }

    public function testHeadersListAndOutputBeforeTheAnswer(): void
    {
        [$list] = self::serve($this->worker(), [['/list']]);
        self::assertStringStartsWith('echoed', $list['body']);
        $seen = json_decode(substr($list['body'], \strlen('echoed')), true);
        self::assertContains('X-L: 1', $seen['list']);
        // The SDK's output capture is a buffer: like FPM's output_buffering, echo does not send the headers.
        self::assertFalse($seen['sent']);
        self::assertSame(['1'], $list['headers']['X-L']);
        self::assertArrayNotHasKey('X-Powered-By', $list['headers'], 'expose_php\'s header is never sent');
    }

    public function testSessionCookieAndCounter(): void
    {
        $worker = $this->worker();
        [$first] = self::serve($worker, [['/session', ['cookies' => []]]]);
        $data = json_decode($first['body'], true);
        self::assertSame(1, $data['n']);
        $cookie = $first['headers']['Set-Cookie'][0] ?? '';
        self::assertStringStartsWith('PHPSESSID=' . $data['id'] . ';', $cookie);
        self::assertFileExists($this->sessions . '/sess_' . $data['id'], 'written when the request ended');

        $again = ['cookies' => ['PHPSESSID' => $data['id']], 'headers' => ['Cookie' => ['PHPSESSID=' . $data['id']]]];
        [$second, $third, $fresh] = self::serve($worker, [['/session', $again], ['/session', $again], ['/session', ['cookies' => []]]]);
        self::assertSame(['n' => 2, 'id' => $data['id']], json_decode($second['body'], true));
        self::assertSame(['n' => 3, 'id' => $data['id']], json_decode($third['body'], true));
        self::assertArrayNotHasKey('Set-Cookie', $second['headers'], 'an existing session sends no cookie again');
        $other = json_decode($fresh['body'], true);
        self::assertSame(1, $other['n'], 'a request without the cookie does not see the last session');
        self::assertNotSame($data['id'], $other['id']);
    }

    public function testUploadsPassMoveUploadedFileDuringTheirRequestOnly(): void
    {
        $tmp = tempnam(sys_get_temp_dir(), 'ferry-upload-');
        file_put_contents($tmp, 'abc');
        $files = ['files' => [['f', 'a.txt', 'text/plain', $tmp, UPLOAD_ERR_OK, 3]]];
        try {
            [$upload, $later] = self::serve($this->worker(), [['/upload', $files], ['/is-uploaded?path=' . rawurlencode($tmp . '.moved')]]);
        } finally {
            @unlink($tmp);
        }
        self::assertSame(['moved' => true, 'content' => 'abc', 'other' => false], json_decode($upload['body'], true));
        self::assertSame(['uploaded' => false], json_decode($later['body'], true));
    }

    public function testAFailedRequestLeavesNothingBehind(): void
    {
        $worker = $this->worker();
        [$failed, $state] = self::serve($worker, [['/throw'], ['/state']]);
        self::assertSame(500, $failed['status']);
        self::assertArrayNotHasKey('X-Lost', $failed['headers']);
        self::assertSame(['code' => 200, 'list' => self::poweredBy(), 'session' => PHP_SESSION_NONE], json_decode($state['body'], true));
        self::assertStringContainsString('RuntimeException: boom', $worker->stderr());
    }

    public function testFiberModeKeepsThePurePhpBehaviour(): void
    {
        $worker = $this->worker(['FERRY_FIBERS' => '1']);
        [$mode, $headers] = self::serve($worker, [['/mode'], ['/headers']]);
        self::assertSame(['ext' => false, 'fibers' => true], json_decode($mode['body'], true));
        self::assertSame(200, $headers['status']);
        self::assertArrayNotHasKey('X-A', $headers['headers']);
    }

    public function testFrontControllerExitEndsTheResponseNotTheWorker(): void
    {
        $worker = $this->worker(['FERRY_TEST_LEGACY' => __DIR__ . '/fixtures/legacy/index.php']);
        [$exit, $die, $count1, $count2, $home] = self::serve($worker, [['/exit'], ['/die-status'], ['/count'], ['/count'], ['/?q=x', ['query' => 'q=x']]]);

        self::assertSame([200, 'partial', ['1']], [$exit['status'], $exit['body'], $exit['headers']['X-Before-Exit']]);
        self::assertSame(['text/html; charset=UTF-8'], $exit['headers']['Content-type'], 'PHP\'s default type, as FPM sends it');
        self::assertSame([404, 'gone'], [$die['status'], $die['body']]);
        self::assertSame(['local' => 1, 'static' => 2, 'self' => '/index.php', 'cwd' => true], json_decode($count1['body'], true));
        self::assertSame(['local' => 1, 'static' => 4, 'self' => '/index.php', 'cwd' => true], json_decode($count2['body'], true));
        self::assertSame([200, 'home x'], [$home['status'], $home['body']]);
        self::assertSame(['No Such Page', null], [$die['reason'], $home['reason']]);
        $worker->sendStop();
        self::assertSame(0, $worker->wait(), 'exit(3) ended a response; the worker left only when told to');
    }

    /**
     * What a new request's headers_list() holds: expose_php=1 (Debian's CLI php.ini) adds
     * it, as under FPM; the answer never carries it.
     *
     * @return list<string>
     */
    private static function poweredBy(): array
    {
        return ini_get('expose_php') ? ['X-Powered-By: PHP/' . PHP_VERSION] : [];
    }
}
