<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Relay\StreamRelay;
use PHPUnit\Framework\TestCase;

/**
 * The server's STOP frames as WorkerSession files them: a cancel (a payload saying why)
 * for FiberRunner, a stream's end for its generator, and a late one for nothing.
 */
final class CancelFrameTest extends TestCase
{
    /** @var list<resource> */
    private array $pair = [];

    protected function tearDown(): void
    {
        // Not left open: the servers later tests start would inherit them (not close-on-exec).
        array_map(fclose(...), $this->pair);
    }

    private function session(bool $fibers): WorkerSession
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);

        return new WorkerSession(new StreamRelay($this->pair[0], $this->pair[0]), $fibers, 8, new FrameCodec(), null);
    }

    private static function stop(int $id, string $why = ''): Frame
    {
        return (new FrameCodec())->decode(FrameCodec::encode(Frame::CONTROL, [0, $id], $why, Frame::STOP));
    }

    public function testACancelNamesItsJobAndWhy(): void
    {
        $session = $this->session(true);
        $session->dispatch([self::stop(3, 'exec_ttl'), self::stop(4, 'client')]);
        self::assertSame([3 => 'exec_ttl', 4 => 'client'], $session->cancelled);
    }

    public function testAStreamsStopEndsTheStreamNotTheJob(): void
    {
        $session = $this->session(true);
        $session->streams[5] = false;
        $session->dispatch([self::stop(5)]);
        self::assertTrue($session->streams[5]);
        self::assertSame([], $session->cancelled);
    }

    public function testALateStreamStopIsKeptNowhere(): void
    {
        // A sequential worker never empties $cancelled: what a late STOP left there would stay.
        $session = $this->session(false);
        for ($id = 1; $id <= 100; $id++) {
            $session->dispatch([self::stop($id)]);
        }
        self::assertSame([], $session->cancelled);
    }
}
