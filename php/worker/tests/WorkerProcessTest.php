<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * The plain Worker as a real child process, driven over each relay like the Go server would.
 */
final class WorkerProcessTest extends TestCase
{
    private const ECHO = __DIR__ . '/fixtures/echo-worker.php';

    /**
     * @return iterable<string, array{string}>
     */
    public static function relays(): iterable
    {
        yield 'fds 3 and 4' => ['fds'];
        yield 'legacy pipes' => ['pipes'];
        yield 'unix socket' => ['unix'];
        yield 'tcp' => ['tcp'];
    }

    /**
     * @dataProvider relays
     */
    public function testHandshakeRepliesWithTheWorkerPid(string $relay): void
    {
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $reply = $worker->handshake();
        self::assertSame($relay === 'fds' ? ['pid', 'token'] : ['pid'], array_keys($reply));
        // The worker pid is what the job "pid" reports from inside the process.
        $worker->send(WorkerProcess::job(1, 'pid'));
        self::assertSame((string) $reply['pid'], $worker->readFrames(1)[0]->payload);
    }

    /**
     * @dataProvider relays
     */
    public function testEchoJobKeepsContextAndId(string $relay): void
    {
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(4000000000, 'echo:body', 'the-context'));
        $answer = $worker->readFrames(1)[0];
        self::assertSame(Frame::CODEC_RAW, $answer->flags);
        self::assertSame([11, 4000000000], $answer->options);
        self::assertSame('the-contextecho:body', $answer->payload);
    }

    /**
     * @dataProvider relays
     */
    public function testPipelinedBatchIsAnsweredWithMatchingIds(string $relay): void
    {
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $worker->handshake();
        $batch = '';
        for ($id = 100; $id < 150; $id++) {
            $batch .= WorkerProcess::job($id, "echo:$id", "c$id");
        }
        $worker->send($batch);
        $seen = [];
        foreach ($worker->readFrames(50) as $answer) {
            [$contextLength, $id] = $answer->options;
            self::assertSame("c{$id}echo:$id", $answer->payload);
            self::assertSame(\strlen("c$id"), $contextLength);
            $seen[] = $id;
        }
        sort($seen);
        self::assertSame(range(100, 149), $seen);
    }

    /**
     * @dataProvider relays
     */
    public function testExceptionBecomesErrorFrameAndTheLoopGoesOn(string $relay): void
    {
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'throw:kaput') . WorkerProcess::job(2, 'echo:after'));
        [$error, $next] = $worker->readFrames(2);
        self::assertSame(Frame::ERROR, $error->flags);
        self::assertSame([0, 1], $error->options);
        self::assertStringStartsWith('RuntimeException: kaput', $error->payload);
        self::assertSame([0, 2], $next->options);
        self::assertSame('echo:after', $next->payload);
        self::assertStringContainsString('job 1 failed: RuntimeException: kaput', $worker->stderr());
    }

    /**
     * @dataProvider relays
     */
    public function testPrintedOutputAndWarningsNeverReachTheRelay(string $relay): void
    {
        // The harness starts PHP with display_errors=stdout, the worst case for pipes.
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'print:abc') . WorkerProcess::job(2, 'notice') . WorkerProcess::job(3, 'echo:x'));
        $answers = $worker->readFrames(3);
        self::assertSame(['printed:abc', 'noticed', 'echo:x'], array_map(static fn (Frame $f) => $f->payload, $answers));
        $worker->sendStop();
        self::assertSame('', $worker->drainUntilClosed(), 'bytes after the last answer');
        self::assertSame(0, $worker->wait());
        $stderr = $worker->stderr();
        self::assertStringContainsString("stray output\nabcmore\n", $stderr);
        self::assertStringContainsString('a warning from the app', $relay === 'fds' ? $worker->log() : $stderr);
    }

    public function testNothingIsWrittenBeforeTheHandshake(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        usleep(300000);
        $worker->handshake();
        self::assertSame(0, $worker->leftover());
    }

    /**
     * @dataProvider relays
     */
    public function testStopFinishesHeldJobsThenExitsZero(string $relay): void
    {
        $worker = new WorkerProcess(self::ECHO, [], $relay);
        $worker->handshake();
        // Jobs and the stop request arrive in the same write: the jobs are still answered.
        $worker->send(
            WorkerProcess::job(7, 'echo:one') . WorkerProcess::job(8, 'echo:two')
            . FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"stop":true}')
        );
        $answers = $worker->readFrames(2);
        self::assertSame([[0, 7], [0, 8]], array_map(static fn (Frame $f) => $f->options, $answers));
        self::assertSame('', $worker->drainUntilClosed());
        self::assertSame(0, $worker->wait());
        self::assertStringContainsString('echo-worker exiting', $worker->stderr());
    }

    public function testWorkerInitiatedStopIsAnnouncedToTheServer(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->handshake();
        $worker->send(WorkerProcess::job(5, 'leave'));
        [$stop, $answer] = $worker->readFrames(2);
        self::assertSame(Frame::CONTROL | Frame::JSON, $stop->flags);
        self::assertSame(['stop' => true], json_decode($stop->payload, true));
        self::assertSame('leaving', $answer->payload);
        self::assertSame(0, $worker->wait());
    }

    public function testClosedRelayEndsTheWorker(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->handshake();
        $worker->closeRelay();
        self::assertSame(0, $worker->wait());
    }

    public function testPingIsAnsweredWithPong(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->handshake();
        $worker->send(FrameCodec::encode(Frame::CONTROL, [], '', Frame::PING) . WorkerProcess::job(1, 'echo:x'));
        [$first, $second] = $worker->readFrames(2);
        $pong = $first->has(Frame::CONTROL) ? $first : $second;
        self::assertSame(Frame::PONG, $pong->streamFlags);
    }

    public function testMalformedJobGetsAnErrorAndTheWorkerStays(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->handshake();
        $worker->send(FrameCodec::encode(Frame::CODEC_RAW, [50, 9], 'short') . WorkerProcess::job(10, 'echo:ok'));
        [$error, $ok] = $worker->readFrames(2);
        self::assertSame(Frame::ERROR, $error->flags);
        self::assertSame([0, 9], $error->options);
        self::assertStringContainsString('context length 50 exceeds the payload size 5', $error->payload);
        self::assertSame('echo:ok', $ok->payload);
    }

    public function testCorruptFrameKillsTheWorkerWithAClearMessage(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->handshake();
        $worker->send("GET / HTTP/1.1\r\n\r\n");
        self::assertNotSame(0, $worker->wait());
        self::assertStringContainsString('FrameException', $worker->stderr());
        self::assertStringContainsString('unsupported frame version', $worker->stderr());
    }

    public function testMissingHandshakeIsAProtocolError(): void
    {
        $worker = new WorkerProcess(self::ECHO);
        $worker->send(WorkerProcess::job(1, 'echo:x'));
        self::assertNotSame(0, $worker->wait());
        self::assertStringContainsString('expected the handshake CONTROL', $worker->stderr());
    }

    /**
     * @dataProvider relays
     */
    public function testSequentialApi(string $relay): void
    {
        $worker = new WorkerProcess(__DIR__ . '/fixtures/sequential-worker.php', [], $relay);
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'abc') . WorkerProcess::job(2, 'fail') . WorkerProcess::job(3, 'xyz'));
        [$a, $b, $c] = $worker->readFrames(3);
        self::assertSame([3, 1], $a->options);
        self::assertSame('n=1cba', $a->payload);
        self::assertSame(Frame::ERROR, $b->flags);
        self::assertSame('refused job 2', $b->payload);
        self::assertSame('n=3zyx', $c->payload);
        $worker->sendStop();
        self::assertSame(3, $worker->wait());
        self::assertStringContainsString("this must not reach the relay\n", $worker->stderr());
        self::assertStringContainsString('served 3', $worker->stderr());
    }
}
