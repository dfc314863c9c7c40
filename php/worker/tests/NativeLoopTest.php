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
 * ext/ferry's worker loop (Internal\Native\NativeLoop, ext/ferry/ferry_loop.c) against the PHP
 * loop it stands in for: the same frames, sent the same way to a real worker process
 * with FERRY_EXT_LOOP=1 and with FERRY_EXT_LOOP=0, must bring the same answers, whatever
 * the handler does and whatever else the server sends between jobs.
 */
final class NativeLoopTest extends TestCase
{
    private const FIXTURE = __DIR__ . '/fixtures/native-worker.php';

    private function worker(bool $native, string $relay = 'fds'): WorkerProcess
    {
        $worker = new WorkerProcess(self::FIXTURE, [
            'PHP_INI_SCAN_DIR' => ExtIni::scanDir(),
            'FERRY_EXT_LOOP' => $native ? '1' : '0',
            'FERRY_MAX_PAYLOAD' => (string) (1 << 20),
        ], $relay);
        $worker->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()])));
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
     * @return array{array<int, list<string>>, array<int, list<string>>, string, string} native and PHP answers, and their logs
     */
    private function both(array $chunks, string $relay = 'fds'): array
    {
        $native = $this->worker(true, $relay);
        $php = $this->worker(false, $relay);

        return [self::exchange($native, $chunks), self::exchange($php, $chunks), $native->stderr(), $php->stderr()];
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
            // A Response, a string (HTML) or an array (JSON) from the handler.
            foreach (['' => '%s', 'string' => '%s', 'array' => '["%s"]'] as $as => $body) {
                $native->send(Http::job(1, "/via?as=$as"));
                $php->send(Http::job(1, "/via?as=$as"));
                self::assertSame([sprintf($body, 'ext'), sprintf($body, 'php')], [$via($native), $via($php)], $relay);
            }
        }
    }

    public function testEveryKindOfHandlerOutcomeIsAnsweredAsByThePhpLoop(): void
    {
        $paths = ['/', '/echo', '/', '/flush', '/created', '/ob-left-open', '/state', '/ob-end-loop', '/', '/int', '/state',
            '/string', '/header', '/state', '/code', '/throw', '/state',
            '/stream', '/', '/hints', '/big?n=5000', '/big?n=2000000', '/state', '/no-such-page', '/hook', '/', '/state',
            '/terminate', '/', '/state'];
        $jobs = '';
        foreach ($paths as $i => $path) {
            $jobs .= Http::job($i + 1, $path, ['cookies' => [], 'headers' => []]);
        }
        [$native, $php, $nativeLog, $phpLog] = $this->both([[$jobs, \count($paths)]]);
        self::assertSame($php, $native);
        // Every job's answer, and {"finished":true} after /terminate and the / after it (the
        // last /state's comes after the last answer read).
        self::assertCount(\count($paths) + 1, $native);
        self::assertSame(array_fill(0, 2, 'flags=1 stream=0 options=[] {"finished":true}'), $native[0]);
        self::assertStringContainsString('thrown by the handler', $nativeLog);
        self::assertSame(substr_count($phpLog, 'DomainException'), substr_count($nativeLog, 'DomainException'));
        // The reset hook ran after each request from its own on, the terminate hook after
        // /terminate and the next one.
        $last = end($native);
        $state = json_decode(substr(end($last), strpos(end($last), '{"cookie"')), true);
        self::assertSame(['resets' => 5, 'terminated' => 2], ['resets' => $state['resets'], 'terminated' => $state['terminated']]);
    }

    /**
     * A worker with terminate hooks (every framework integration registers one) is still
     * served by the extension: the answer goes out, flagged FINISHING, while the hook runs,
     * and {"finished":true} follows once it is done.
     */
    public function testWorkersWithTerminateHooksStayInTheExtensionAndAnswerBeforeTheHooks(): void
    {
        $fifo = sys_get_temp_dir() . '/ferry-native-hook-' . getmypid() . '-' . bin2hex(random_bytes(3));
        self::assertTrue(posix_mkfifo($fifo, 0o600));
        try {
            foreach ([true, false] as $ext) {
                $worker = $this->worker($ext);
                $worker->send(Http::job(1, '/hook-waits?fifo=' . urlencode($fifo) . '&on=3') . Http::job(2, '/hook') . Http::job(3, '/via'));
                // Read while the hook of job 3 waits on the FIFO: nobody has written to it yet.
                $seen = array_map(static fn (Frame $f): string => ($f->flags & Frame::CONTROL) !== 0
                    ? sprintf('control flags=%d %s', $f->flags, $f->payload)
                    : sprintf('%d stream=0x%02x %s', $f->options[1], $f->streamFlags, Http::answer($f)['body']),
                    $worker->readFrames(5, self::timeout()));
                $via = $ext ? 'ext' : 'php';
                self::assertSame([
                    '1 stream=0x10 waiting hook added', 'control flags=1 {"finished":true}',
                    '2 stream=0x10 reset hook added', 'control flags=1 {"finished":true}',
                    "3 stream=0x10 $via",
                ], $seen, $via);
                $go = fopen($fifo, 'w');
                fwrite($go, "go\n");
                fclose($go);
                $done = $worker->readFrames(1, self::timeout())[0];
                self::assertSame([Frame::CONTROL, '{"finished":true}'], [$done->flags, $done->payload], $via);
                $worker->send(Http::job(4, '/hook-via'));
                $hooks = json_decode(Http::answer($worker->readFrames(1, self::timeout())[0])['body'], true);
                self::assertSame(['1' => $via, '2' => $via, '3' => $via], $hooks, $via);
            }
        } finally {
            @unlink($fifo);
        }
    }

    public function testSuperglobalsWrittenByARequestAreGoneForTheNext(): void
    {
        $jobs = Http::job(1, '/leak') . Http::job(2, '/leaked') . Http::job(3, '/via') . Http::job(4, '/leak')
            . Http::job(5, '/echo') . Http::job(6, '/leaked');
        [$native, $php] = $this->both([[$jobs, 6]]);
        self::assertStringEndsWith('ext', $native[3][0], 'the C loop serves these jobs');
        unset($native[3], $php[3]);
        self::assertSame($php, $native);
        foreach ([2, 6] as $id) {
            $seen = json_decode(substr($native[$id][0], strpos($native[$id][0], '{"server"')), true);
            self::assertSame(['server' => null, 'get' => [], 'post' => [], 'cookie' => ['a' => '1', 'b' => '2'], 'files' => [],
                'request' => [], 'argv' => true], $seen, "job $id");
        }
    }

    public function testFramesAroundTheJobsAreLeftToThePhpLoop(): void
    {
        $cookies = ['cookies' => ['session' => 'abc'], 'headers' => ['Cookie' => ['session=abc']]];
        $chunks = [
            // a ping among jobs, a job whose context length is past its payload, a context
            // outside the extension's subset, a nested cookie (parse_str() rebuilds it), a body too
            // large for the extension's buffer
            [Http::job(1, '/') . self::ping() . Http::job(2, '/cookie', $cookies) . Http::job(3, '/state')
                . FrameCodec::encode(Frame::CODEC_RAW, [500, 4], 'short') . Http::job(5, '/'), 4],
            [WorkerProcess::job(6, '', serialize(['method' => 'GET', 'path' => '/cookie', 'time' => 1.5])) . Http::job(7, '/state'), 2],
            [Http::job(8, '/cookie', ['cookies' => ['a[b]' => 'x y'], 'headers' => []]) . Http::job(9, '/state'), 2],
            [Http::job(10, '/body', ['method' => 'POST'], str_repeat('p', 300000)) . Http::job(11, '/'), 2],
        ];
        // The same jobs with a frame split across two writes, the second sent once the
        // answers before it came.
        $split = Http::job(12, '/body', ['method' => 'POST'], str_repeat('q', 70000));
        $chunks[] = [Http::job(13, '/') . substr($split, 0, 40000), 1];
        $chunks[] = [substr($split, 40000) . Http::job(14, '/state'), 2];
        [$native, $php] = $this->both($chunks);
        self::assertSame($php, $native);
        self::assertStringStartsWith('flags=' . Frame::ERROR, $native[4][0]);
        self::assertSame(['flags=' . Frame::CONTROL . ' stream=' . Frame::PONG . ' options=[] '], $native[0]);
    }

    public function testJobsReadAheadOfAStreamReachThePhpLoop(): void
    {
        // While /stream sends its parts the worker reads the relay for a STOP: the jobs the
        // extension read behind it must be answered, once each.
        $jobs = Http::job(1, '/stream') . Http::job(2, '/') . Http::job(3, '/hints') . Http::job(4, '/state') . Http::job(5, '/');
        foreach (['fds', 'unix', 'tcp', 'pipes'] as $relay) {
            [$native, $php] = $this->both([[$jobs, 5]], $relay);
            self::assertSame($php, $native, $relay);
            self::assertCount(3, $native[1], 'two parts and the end');
        }
    }

    public function testAJobSplitAcrossAStreamIsReadWhole(): void
    {
        // The extension holds the start of job 2 when the stream's second part makes the
        // worker read the relay, which brings the rest of job 2: the parts must join.
        $job2 = Http::job(2, '/body', ['method' => 'POST'], str_repeat('r', 5000));
        foreach ([true, false] as $mode) {
            $fifo = sys_get_temp_dir() . '/ferry-native-fifo-' . bin2hex(random_bytes(6));
            self::assertTrue(posix_mkfifo($fifo, 0600));
            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/stream-until?fifo=' . urlencode($fifo)) . substr($job2, 0, 2000));
            $first = $worker->readFrames(1, self::timeout())[0];
            self::assertSame('first ', substr($first->payload, $first->options[0]));
            $worker->send(substr($job2, 2000) . Http::job(3, '/'));
            file_put_contents($fifo, "go\n"); // opens once the generator waits on it
            $frames = $worker->readFrames(3, self::timeout());
            unlink($fifo);
            self::assertSame([1, 1, 2], array_map(static fn (Frame $f): int => $f->options[1], $frames));
            self::assertSame(md5(str_repeat('r', 5000)) . ' 5000', Http::answer($frames[2])['body']);
            self::assertSame(3, $worker->readFrames(1, self::timeout())[0]->options[1]);
        }
    }

    /**
     * Property: whatever the jobs and wherever the stream is cut between writes, both
     * loops give every job the same answer.
     */
    public function testRandomJobsSplitAnywhereGetTheSameAnswers(): void
    {
        $paths = ['/', '/echo', '/string', '/header', '/code', '/throw', '/cookie', '/body', '/int', '/flush', '/hints', '/stream', '/state'];
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
            self::assertCount($jobs + (isset($native[0]) ? 1 : 0), $native, "seed $seed");
        }
    }

    public function testStopAndExitEndTheWorkerAsInThePhpLoop(): void
    {
        foreach ([true, false] as $mode) {
            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/') . Http::job(2, '/stop') . Http::job(3, '/'));
            $frames = $worker->readFrames(4, self::timeout());
            self::assertSame([1, 0, 2, 3], array_map(static fn (Frame $f): int => $f->options[1] ?? 0, $frames), 'the stop goes when asked for, and the job read before it is answered');
            self::assertSame('{"stop":true}', $frames[1]->payload);
            self::assertSame(0, $worker->wait(self::timeout()));

            $worker = $this->worker($mode);
            $worker->send(Http::job(1, '/') . Http::job(2, '/exit') . Http::job(3, '/'));
            self::assertSame(1, $worker->readFrames(1, self::timeout())[0]->options[1]);
            self::assertSame(3, $worker->wait(self::timeout()), 'exit() in a handler ends the worker with its status');
        }
    }

    public function testTheServerClosingTheRelayEndsTheLoop(): void
    {
        $worker = $this->worker(true);
        $worker->send(Http::job(1, '/') . substr(Http::job(2, '/'), 0, 20));
        self::assertSame(1, $worker->readFrames(1, self::timeout())[0]->options[1]);
        $worker->closeRelay();
        self::assertSame(0, $worker->wait(self::timeout()));
        self::assertSame('', trim($worker->stderr()));
    }
}
