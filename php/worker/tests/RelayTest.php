<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\Relay\RelayException;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Tests\Support\WorkerProcess;
use PHPUnit\Framework\TestCase;

/**
 * The relay on descriptors 3 and 4 (FERRY_RELAY=pipes:3,4) and the handshake token, with
 * real worker processes started the way the server starts them.
 */
final class RelayTest extends TestCase
{
    private const SDK = __DIR__ . '/fixtures/sdk-worker.php';

    public function testHandshakeOverDescriptorsCarriesTheToken(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'fds');
        $reply = $worker->handshake();
        self::assertSame(['pid' => $worker->pid(), 'token' => $worker->token()], $reply);
        $worker->send(WorkerProcess::job(1, 'echo:over fd 3 and 4', 'ctx'));
        $answer = $worker->readFrames(1)[0];
        self::assertSame([3, 1], $answer->options);
        self::assertSame('ctxover fd 3 and 4', $answer->payload);
        $worker->sendStop();
        self::assertSame('', $worker->drainUntilClosed());
        self::assertSame(0, $worker->wait());
    }

    /**
     * @return iterable<string, array{string}>
     */
    public static function socketRelays(): iterable
    {
        yield 'unix socket' => ['unix'];
        yield 'tcp' => ['tcp'];
    }

    /**
     * @dataProvider socketRelays
     */
    public function testTokenIsSentOnSocketsToo(string $relay): void
    {
        $token = bin2hex(random_bytes(16));
        $worker = new WorkerProcess(self::SDK, ['FERRY_RELAY_TOKEN' => $token], $relay);
        self::assertSame(['pid' => $worker->pid(), 'token' => $token], $worker->handshake());
    }

    public function testWithoutTokenTheHandshakeHasOnlyThePid(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'pipes');
        self::assertSame(['pid'], array_keys($worker->handshake()));
    }

    public function testTokenIsGoneFromTheEnvironmentOfTheApplication(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'fds');
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'env'));
        $seen = json_decode($worker->readFrames(1)[0]->payload, true, 4, JSON_THROW_ON_ERROR);
        self::assertSame(
            ['getenv' => false, 'getenv_all' => false, 'env' => false, 'server' => false, 'child' => []],
            $seen
        );
    }

    public function testWritesToStdoutAreLogOutputNotFrames(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'fds');
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'stdout') . WorkerProcess::job(2, 'echo:next'));
        [$first, $second] = $worker->readFrames(2);
        self::assertSame(['wrote', 'next'], [$first->payload, $second->payload]);
        $worker->sendStop();
        self::assertSame('', $worker->drainUntilClosed(), 'bytes after the last answer');
        self::assertSame(0, $worker->wait());
        self::assertStringContainsString("fwrite to STDOUT\nfile_put_contents to php://stdout\n", $worker->stdout());
    }

    public function testFatalErrorPagePrintedAtShutdownGoesToTheLog(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'fds');
        $worker->handshake();
        $worker->send(WorkerProcess::job(1, 'fatal'));
        // The worker asks to be retired and fails the job (a 500, not a vanished worker's 502).
        [$stop, $error] = $worker->readFrames(2);
        self::assertSame([Frame::CONTROL | Frame::JSON, '{"stop":true}'], [$stop->flags, $stop->payload]);
        self::assertSame([Frame::ERROR, 1], [$error->flags, $error->options[1]]);
        self::assertStringStartsWith('PHP fatal error', $error->payload);
        self::assertSame('', $worker->drainUntilClosed(), 'the relay carries nothing but frames');
        self::assertSame(255, $worker->wait());
        self::assertStringContainsString('Allowed memory size', $worker->log());
        self::assertStringContainsString('<h1>fatal error page</h1>', $worker->log());
        self::assertStringContainsString('fatal page on STDOUT', $worker->stdout());
    }

    public function testMissingDescriptorIsAClearError(): void
    {
        $this->expectException(RelayException::class);
        $this->expectExceptionMessage('cannot open descriptor 97');
        StreamRelay::fromDsn('pipes:97,98');
    }

    public function testStandardStreamsAreRefusedAsRelayDescriptors(): void
    {
        $this->expectException(RelayException::class);
        $this->expectExceptionMessage('descriptor 0 is a standard stream');
        StreamRelay::fromDsn('pipes:0,1');
    }

    public function testLegacyPipesRelayStillServes(): void
    {
        $worker = new WorkerProcess(self::SDK, [], 'pipes');
        $worker->handshake();
        $worker->send(WorkerProcess::job(9, 'echo:legacy'));
        $answer = $worker->readFrames(1)[0];
        self::assertSame([Frame::CODEC_RAW, [0, 9], 'legacy'], [$answer->flags, $answer->options, $answer->payload]);
    }
}
