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
 * ext/ferry's Fiber-mode hot path (Internal\Native\NativeFibers, ext/ferry/ferry_fiber*.c) against
 * the PHP runner it stands in for: the same frames, sent the same way to a real Fiber-mode
 * worker process with FERRY_EXT_LOOP=1 and with FERRY_EXT_LOOP=0, must bring the same
 * answers and control frames, whatever the handler does (waits included) and whatever
 * else the server sends between jobs; and the usual request must really be served in C.
 */
final class NativeFibersTest extends TestCase
{
    private const FIXTURE = __DIR__ . '/fixtures/native-fiber-worker.php';

    /** @param array<string, mixed> $hello */
    private function worker(bool $native, string $relay = 'fds', array $hello = []): WorkerProcess
    {
        $worker = new WorkerProcess(self::FIXTURE, [
            'PHP_INI_SCAN_DIR' => ExtIni::scanDir(),
            'FERRY_EXT_LOOP' => $native ? '1' : '0',
            'FERRY_MAX_PAYLOAD' => (string) (1 << 20),
            'FERRY_MAX_CONCURRENCY' => '8',
        ], $relay);
        $worker->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()] + $hello)));
        self::assertSame(Frame::CONTROL | Frame::JSON, $worker->readFrames(1, self::timeout())[0]->flags);

        return $worker;
    }

    private static function timeout(): float
    {
        return (float) (getenv('FERRY_TEST_TIMEOUT') ?: 10);
    }

    /**
     * Sends each chunk once the answers the previous ones asked for have come, and returns
     * every frame the worker wrote, by job id (0: control frames), in the order written.
     *
     * @param list<array{0: string, 1: int}> $chunks bytes, and how many final answers they complete
     * @return array<int, list<string>>
     */
    private static function exchange(WorkerProcess $worker, array $chunks): array
    {
        $frames = [];
        foreach ($chunks as [$bytes, $answers]) {
            $worker->send($bytes);
            while ($answers > 0) {
                $frame = $worker->readFrames(1, self::timeout())[0];
                $id = ($frame->flags & Frame::CONTROL) !== 0 ? 0 : ($frame->options[1] ?? -1);
                $frames[$id][] = sprintf('flags=%d stream=%d options=%s %s', $frame->flags, $frame->streamFlags, json_encode($frame->options), $frame->payload);
                if ($id !== 0 && ($frame->streamFlags & Frame::STREAM) === 0) {
                    $answers--;
                }
            }
        }
        ksort($frames);

        return $frames;
    }

    /**
     * @param list<array{0: string, 1: int}> $chunks
     * @param array<string, mixed> $hello
     * @return array{array<int, list<string>>, array<int, list<string>>, string, string} native and PHP answers, and their logs
     */
    private function both(array $chunks, string $relay = 'fds', array $hello = []): array
    {
        $native = $this->worker(true, $relay, $hello);
        $php = $this->worker(false, $relay, $hello);

        return [self::exchange($native, $chunks), self::exchange($php, $chunks), $native->stderr(), $php->stderr()];
    }

    private static function served(WorkerProcess $worker, int $id): ?int
    {
        $worker->send(Http::job($id, '/served'));

        return json_decode(Http::answer($worker->readFrames(1, self::timeout())[0])['body'], true)['served'];
    }

    private static function ping(): string
    {
        return FrameCodec::encode(Frame::CONTROL, [], '', Frame::PING);
    }

    public function testTheUsualRequestRunsInTheExtension(): void
    {
        $via = static fn (WorkerProcess $w): string => Http::answer($w->readFrames(1, self::timeout())[0])['body'];
        foreach (['fds', 'unix', 'tcp', 'pipes'] as $relay) {
            $native = $this->worker(true, $relay);
            $php = $this->worker(false, $relay);
            $before = self::served($native, 100);
            foreach (['' => '%s', 'string' => '%s', 'array' => '["%s"]'] as $as => $body) {
                $native->send(Http::job(1, "/via?as=$as"));
                $php->send(Http::job(1, "/via?as=$as"));
                self::assertSame([sprintf($body, 'ext'), sprintf($body, 'php')], [$via($native), $via($php)], $relay);
            }
            // Answered in C: fiber_body() wrote the three answers without the SDK's PHP.
            self::assertSame($before + 3, self::served($native, 101) - 1, $relay);
        }
    }

    public function testEveryKindOfHandlerOutcomeIsAnsweredAsByThePhpRunner(): void
    {
        $paths = ['/', '/echo', '/', '/flush', '/clean', '/created', '/state', '/ob-left-open', '/state', '/', '/int', '/string',
            '/throw', '/state', '/stream', '/', '/hints', '/big?n=5000', '/big?n=2000000', '/state', '/no-such-page', '/file',
            '/sleep?ms=5', '/', '/sleep-throw', '/sleep-stream', '/', '/defer', '/state', '/reporting', '/state',
            '/suspend', '/', '/state', '/terminate', '/', '/state', '/code', '/', '/state'];
        $jobs = '';
        foreach ($paths as $i => $path) {
            $jobs .= Http::job($i + 1, $path, ['cookies' => [], 'headers' => []]);
        }
        [$native, $php, $nativeLog, $phpLog] = $this->both([[$jobs, \count($paths)]]);
        self::assertSame($php, $native);
        // Each answer followed by terminate hooks (from /terminate on) ends with the report
        // that lets the server route to the worker again, in both runners alike.
        $finished = sprintf('flags=%d stream=0 options=[] %s', Frame::CONTROL, Frame::FINISHED);
        self::assertNotEmpty($native[0] ?? []);
        self::assertSame([$finished], array_values(array_unique($native[0])));
        unset($native[0]);
        self::assertCount(\count($paths), $native);
        foreach (['thrown by the handler', 'thrown after a wait', 'suspended its Fiber outside the worker\'s event loop'] as $logged) {
            self::assertSame(substr_count($phpLog, $logged), substr_count($nativeLog, $logged), $logged);
            self::assertGreaterThan(0, substr_count($nativeLog, $logged), $logged);
        }
        $states = [];
        foreach ($paths as $i => $path) {
            if ($path === '/state') {
                $answer = $native[$i + 1][0];
                $states[] = json_decode(substr($answer, strpos($answer, '{"level"')), true);
            }
        }
        self::assertSame([1], array_values(array_unique(array_column($states, 'level'))), 'no buffer left open is carried');
        self::assertSame(5, end($states)['terminated'], 'the hook ran after /terminate and each job after it');
    }

    public function testALoopCallbackAJobLeavesRunsBeforeTheNextJob(): void
    {
        // ext/ferry's Fibers give the relay back to the runner after such a job, whose loop runs it.
        foreach ([true, false] as $mode) {
            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/defer'));
            self::assertSame('deferred', Http::answer($worker->readFrames(1, self::timeout())[0])['body']);
            $worker->send(Http::job(2, '/state'));
            self::assertSame(1, json_decode(Http::answer($worker->readFrames(1, self::timeout())[0])['body'], true)['deferred']);
        }
    }

    public function testJobsThatWaitLetOthersRunAndReportWaiting(): void
    {
        // A waiting job frees the worker for the next ones, answered first; the server is
        // told once everything it sent waits.
        $chunks = [
            [Http::job(1, '/sleep?ms=150') . Http::job(2, '/') . Http::job(3, '/echo'), 3],
            [Http::job(4, '/sleep?ms=100'), 1],
            [Http::job(5, '/') . Http::job(6, '/sleep?ms=50') . Http::job(7, '/sleep?ms=20') . Http::job(8, '/'), 4],
        ];
        [$native, $php] = $this->both($chunks, 'fds', ['waits' => true]);
        self::assertSame($php, $native);
        self::assertContains('flags=' . (Frame::CONTROL | Frame::JSON) . ' stream=0 options=[] {"waiting":true}', $native[0]);
        foreach ([1, 4, 6, 7] as $id) {
            self::assertStringContainsString('before after slept', $native[$id][0], "job $id");
        }
        $worker = $this->worker(true, 'fds', ['waits' => true]);
        $worker->send(Http::job(1, '/sleep?ms=200') . Http::job(2, '/'));
        $order = [];
        foreach ($worker->readFrames(3, self::timeout()) as $frame) {
            $order[] = ($frame->flags & Frame::CONTROL) !== 0 ? $frame->payload : $frame->options[1];
        }
        self::assertSame([2, '{"waiting":true}', 1], $order);
    }

    public function testAJobSentWhileAnotherWaitsRunsInTheExtensionToo(): void
    {
        foreach (['ext' => true, 'php' => false] as $via => $mode) {
            $worker = $this->worker($mode, 'fds', ['waits' => true]);
            $worker->send(Http::job(1, '/sleep?ms=1000'));
            // Sent once the worker said that everything it holds waits.
            self::assertSame('{"waiting":true}', $worker->readFrames(1, self::timeout())[0]->payload);
            $worker->send(Http::job(2, '/via') . Http::job(3, '/sleep?ms=200') . Http::job(4, '/via?as=string'));
            $answers = [];
            foreach ($worker->readFrames(5, self::timeout()) as $frame) {
                $answers[] = ($frame->flags & Frame::CONTROL) !== 0 ? $frame->payload : $frame->options[1] . ' ' . Http::answer($frame)['body'];
            }
            self::assertSame(["2 $via", "4 $via", '{"waiting":true}', '3 before after slept 200', '1 before after slept 1000'], $answers, $via);
        }
    }

    public function testNothingIsKeptFromJobToJob(): void
    {
        // memory_get_usage() after rounds of every kind of job: what a job leaks grows it.
        $paths = ['/', '/echo', '/sleep?ms=0', '/throw', '/int', '/stream', '/hints', '/sleep-stream', '/created', '/string', '/'];
        $frames = \count($paths) + 5; // /stream and /sleep-stream send two parts each, /hints one
        $worker = $this->worker(true);
        $id = 1;
        $used = [];
        for ($round = 0; $round < 4; $round++) {
            for ($i = 0; $i < 100; $i++) {
                $batch = '';
                foreach ($paths as $path) {
                    $batch .= Http::job($id++, $path);
                }
                $worker->send($batch);
                $worker->readFrames($frames, self::timeout());
            }
            $worker->send(Http::job($id++, '/mem'));
            $used[] = json_decode(Http::answer($worker->readFrames(1, self::timeout())[0])['body'], true)['mem'];
        }
        // The first round warms caches up (a parked Fiber, the class and property caches).
        self::assertSame([$used[1], $used[1]], [$used[2], $used[3]], json_encode($used));
    }

    public function testSuperglobalsWrittenByARequestAreGoneForTheNext(): void
    {
        $jobs = Http::job(1, '/leak') . Http::job(2, '/leaked') . Http::job(3, '/leak') . Http::job(4, '/echo') . Http::job(5, '/leaked');
        [$native, $php] = $this->both([[$jobs, 5]]);
        self::assertSame($php, $native);
        $seen = json_decode(substr($native[5][0], strpos($native[5][0], '{"server"')), true);
        self::assertNull($seen['server']);
        self::assertSame([[], [], []], [$seen['get'], $seen['post'], $seen['request']]);
    }

    public function testHeadersCookiesBodiesAndUploadsAnswerAlike(): void
    {
        $tmp = tempnam(sys_get_temp_dir(), 'ferry-fiber-upload-');
        file_put_contents($tmp, str_repeat('u', 3000));
        $cookies = ['cookies' => ['session' => 'abc', 'a[b]' => 'x y'], 'headers' => ['Cookie' => ['session=abc'], 'X-Many' => ['1', '2']]];
        $form = ['method' => 'POST', 'form' => ['name' => ['v'], 'list[]' => ['1', '2']], 'parsed' => true,
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']]];
        $upload = ['method' => 'POST', 'parsed' => true, 'form' => ['title' => ['t']],
            'files' => [['doc', 'a.txt', 'text/plain', $tmp, UPLOAD_ERR_OK, 3000], ['none', '', '', '', UPLOAD_ERR_NO_FILE, 0]]];
        $chunks = [
            [Http::job(1, '/cookie', $cookies) . Http::job(2, '/') . self::ping() . Http::job(3, '/body', $form, 'name=v&list[]=1&list[]=2')
                . Http::job(4, '/upload', $upload) . Http::job(5, '/body', ['method' => 'POST'], str_repeat('p', 300000))
                . FrameCodec::encode(Frame::CODEC_RAW, [500, 6], 'short') . Http::job(7, '/'), 6],
            [WorkerProcess::job(8, '', serialize(['method' => 'GET', 'path' => '/cookie', 'time' => 1.5])) . Http::job(9, '/state'), 2],
        ];
        [$native, $php] = $this->both($chunks);
        unlink($tmp);
        self::assertSame($php, $native);
        self::assertStringStartsWith('flags=' . Frame::ERROR, $native[6][0]);
        self::assertSame(['flags=' . Frame::CONTROL . ' stream=' . Frame::PONG . ' options=[] '], $native[0]);
        self::assertStringContainsString(md5(str_repeat('u', 3000)), $native[4][0]);
    }

    /**
     * Property: whatever the jobs and wherever the stream is cut between writes, both
     * runners give every job the same answer.
     */
    public function testRandomJobsSplitAnywhereGetTheSameAnswers(): void
    {
        $paths = ['/', '/echo', '/string', '/throw', '/cookie', '/body', '/int', '/flush', '/hints', '/stream', '/state',
            '/sleep?ms=2', '/sleep-stream', '/created'];
        foreach ([7, 1234, 99001] as $seed) {
            mt_srand($seed);
            $stream = '';
            $jobs = 0;
            for ($i = 1; $i <= 40; $i++) {
                if (mt_rand(0, 9) === 0) {
                    $stream .= self::ping();
                }
                $path = $paths[mt_rand(0, \count($paths) - 1)];
                $context = mt_rand(0, 3) === 0 ? ['cookies' => ['k' => (string) mt_rand()], 'headers' => ['Cookie' => ['k=v']]] : [];
                $body = $path === '/body' ? str_repeat(\chr(mt_rand(65, 90)), mt_rand(0, 120000)) : '';
                $stream .= Http::job($i, $path, $context + ($body === '' ? [] : ['method' => 'POST']), $body);
                $jobs++;
            }
            $cuts = [0, \strlen($stream)];
            for ($c = 0; $c < 30; $c++) {
                $cuts[] = mt_rand(1, \strlen($stream) - 1);
            }
            sort($cuts);
            $chunks = [];
            for ($c = 1; $c < \count($cuts); $c++) {
                $chunks[] = [substr($stream, $cuts[$c - 1], $cuts[$c] - $cuts[$c - 1]), 0];
            }
            $chunks[\count($chunks) - 1][1] = $jobs;
            [$native, $php] = $this->both($chunks);
            self::assertSame($php, $native, "seed $seed");
        }
    }

    public function testAStopFrameEndsAStreamThatWaits(): void
    {
        foreach ([true, false] as $mode) {
            $worker = $this->worker($mode);
            // The second part is due 300 ms after the first: the STOP comes long before.
            $worker->send(Http::job(1, '/sleep-stream?ms=300'));
            $first = $worker->readFrames(1, self::timeout())[0];
            self::assertSame(Frame::STREAM, $first->streamFlags & Frame::STREAM);
            $worker->send(FrameCodec::encode(Frame::CONTROL, [0, 1], '', Frame::STOP) . Http::job(2, '/'));
            $seen = [];
            foreach ($worker->readFrames(2, self::timeout()) as $frame) {
                $seen[] = [$frame->options[1], $frame->streamFlags & Frame::STREAM, substr($frame->payload, $frame->options[0])];
            }
            self::assertSame([[2, 0, "Hello, example.com:8080\n"], [1, 0, '']], $seen, $mode ? 'native' : 'php');
        }
    }

    public function testStopAndExitEndTheWorkerAsInThePhpRunner(): void
    {
        foreach ([true, false] as $mode) {
            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/') . Http::job(2, '/stop') . Http::job(3, '/'));
            $frames = $worker->readFrames(4, self::timeout());
            self::assertSame([1, 0, 2, 3], array_map(static fn (Frame $f): int => $f->options[1] ?? 0, $frames));
            self::assertSame('{"stop":true}', $frames[1]->payload);
            self::assertSame(0, $worker->wait(self::timeout()));

            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/') . Http::job(2, '/exit') . Http::job(3, '/'));
            self::assertSame(1, $worker->readFrames(1, self::timeout())[0]->options[1]);
            self::assertSame(3, $worker->wait(self::timeout()), 'exit() in a handler ends the worker with its status');
        }
    }

    public function testAFatalErrorAnswersTheRunningJob(): void
    {
        if (getenv('USE_ZEND_ALLOC') === '0') {
            self::markTestSkipped('memory_limit is not enforced without the Zend allocator (memcheck_sdk.sh)');
        }
        foreach ([true, false] as $mode) {
            // Alone, the job runs in C, with only a placeholder Job; behind a waiting one, in PHP.
            $worker = $this->worker($mode);
            $worker->send(Http::job(2, '/fatal'));
            $frames = $worker->readFrames(2, self::timeout());
            self::assertSame([Frame::CONTROL | Frame::JSON, Frame::ERROR], [$frames[0]->flags, $frames[1]->flags]);
            self::assertSame(2, $frames[1]->options[1]);
            self::assertSame(255, $worker->wait(self::timeout()));

            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/sleep?ms=300') . Http::job(2, '/fatal'));
            $frames = $worker->readFrames(3, self::timeout());
            $seen = array_map(static fn (Frame $f): string => $f->flags . ' ' . ($f->options[1] ?? 0), $frames);
            sort($seen);
            self::assertSame([Frame::ERROR . ' 1', Frame::ERROR . ' 2', (Frame::CONTROL | Frame::JSON) . ' 0'], $seen, $mode ? 'native' : 'php');
            self::assertSame(255, $worker->wait(self::timeout()));
        }
    }

    public function testTheServerClosingTheRelayEndsTheRunner(): void
    {
        $worker = $this->worker(true);
        $worker->send(Http::job(1, '/') . Http::job(2, '/sleep?ms=1') . substr(Http::job(3, '/'), 0, 20));
        self::assertSame([1, 2], array_map(static fn (Frame $f): int => $f->options[1], $worker->readFrames(2, self::timeout())));
        $worker->closeRelay();
        self::assertSame(0, $worker->wait(self::timeout()));
        self::assertSame('', trim($worker->stderr()));
    }
}
