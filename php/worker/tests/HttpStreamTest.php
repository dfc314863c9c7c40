<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameParser;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\StreamStoppedException;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Psr7\Psr7Worker;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Worker;
use Nyholm\Psr7\Stream;
use PHPUnit\Framework\TestCase;

/**
 * Streamed answers and early hints (docs/protocol.md, "Streamed answers"): the frames
 * HttpWorker writes while a handler runs, read from the server's end of a socket pair.
 */
final class HttpStreamTest extends TestCase
{
    /** @var array<int, resource> */
    private array $pair = [];
    /** @var list<string> */
    private array $log = [];

    protected function setUp(): void
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
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
    }

    /**
     * @return array{Payload, Job}
     */
    private function handle(callable $handler): array
    {
        $http = new HttpWorker(new Worker(new StreamRelay($this->pair[0], $this->pair[0])));
        $payload = new Payload('', HttpRequestTest::context(), 7);
        $capture = new SyncCapture();
        $job = new Job($payload, $capture);
        $capture->begin($job);
        try {
            $answer = $http->handle($handler(...), $payload, $job);
        } finally {
            $capture->end($job);
        }

        return [$answer, $job];
    }

    /**
     * @return list<Frame> what the worker wrote so far
     */
    private function frames(): array
    {
        $parser = new FrameParser(new FrameCodec());
        stream_set_blocking($this->pair[1], false);
        while (($bytes = fread($this->pair[1], 1 << 16)) !== false && $bytes !== '') {
            $parser->push($bytes);
        }
        stream_set_blocking($this->pair[1], true);

        return $parser->drain();
    }

    public function testPartsGoOutAsTheyAreMadeAndTheAnswerEndsThem(): void
    {
        [$answer] = $this->handle(static function (): Response {
            echo 'before;';

            return Response::stream((static function (): \Generator {
                yield 'one;';
                echo 'between;';
                yield '';
                yield 'two;';
            })(), 206, ['Content-Type' => 'text/plain']);
        });
        $frames = $this->frames();
        self::assertCount(3, $frames);
        foreach ($frames as $frame) {
            self::assertSame(Frame::STREAM, $frame->streamFlags);
            self::assertSame(7, $frame->options[1]);
        }
        $head = substr($frames[0]->payload, 0, $frames[0]->options[0]);
        self::assertSame(['status' => 206, 'headers' => ['Content-Type' => ['text/plain']]], json_decode($head, true));
        self::assertSame('before;one;', substr($frames[0]->payload, $frames[0]->options[0]));
        self::assertSame([0, 'between;'], [$frames[1]->options[0], $frames[1]->payload]);
        self::assertSame([0, 'two;'], [$frames[2]->options[0], $frames[2]->payload]);
        self::assertSame(['', ''], [$answer->context, $answer->body]);
    }

    public function testAStopFromTheServerEndsTheGeneratorAtItsYield(): void
    {
        $caught = null;
        $server = $this->pair[1];
        [$answer] = $this->handle(static function () use (&$caught, $server): Response {
            return Response::stream((static function () use (&$caught, $server): \Generator {
                try {
                    yield 'one;';
                    // The client leaves while the next part is made.
                    fwrite($server, FrameCodec::encode(Frame::CONTROL, [0, 7], '', Frame::STOP));
                    yield 'two;';
                    yield 'three;';
                } catch (StreamStoppedException $e) {
                    $caught = $e;
                }
            })());
        });
        self::assertInstanceOf(StreamStoppedException::class, $caught);
        $frames = $this->frames();
        self::assertCount(1, $frames, 'nothing is sent after the stop');
        self::assertSame(['', ''], [$answer->context, $answer->body]);
    }

    public function testAFailureAfterTheFirstPartIsAnErrorFrame(): void
    {
        [$answer, $job] = $this->handle(static fn (): Response => Response::stream((static function (): \Generator {
            yield 'partial';
            throw new \RuntimeException('broken');
        })()));
        $frames = $this->frames();
        self::assertCount(2, $frames);
        self::assertTrue($frames[1]->has(Frame::ERROR));
        self::assertSame([0, 7], $frames[1]->options);
        self::assertStringContainsString('broken', $frames[1]->payload);
        self::assertTrue($job->answered, 'the answer the loop writes next is dropped');
        self::assertStringContainsString('failed while streaming', implode("\n", $this->log));
    }

    public function testAnEmptyStreamIsAnOrdinaryAnswer(): void
    {
        [$answer] = $this->handle(static fn (): Response => Response::stream([], 204));
        self::assertSame([], $this->frames());
        self::assertSame(204, json_decode($answer->context, true)['status']);
    }

    public function testEarlyHintsGoBeforeTheAnswer(): void
    {
        self::assertFalse(Response::earlyHints(['Link' => '</a.css>; rel=preload']), 'no request runs');
        [$answer] = $this->handle(static function (): Response {
            Response::earlyHints(['Link' => ['</a.css>; rel=preload; as=style', '</b.js>; rel=preload; as=script']]);

            return Response::text('done');
        });
        $frames = $this->frames();
        self::assertCount(1, $frames);
        self::assertSame(Frame::STREAM, $frames[0]->streamFlags);
        self::assertSame(strlen($frames[0]->payload), $frames[0]->options[0], 'a head without a body');
        self::assertSame(
            ['status' => 103, 'headers' => ['Link' => ['</a.css>; rel=preload; as=style', '</b.js>; rel=preload; as=script']]],
            json_decode($frames[0]->payload, true)
        );
        self::assertSame('done', $answer->body);
        self::assertFalse(Response::earlyHints(['Link' => '</a.css>']), 'the request is over');
    }

    public function testALargePsr7BodyIsStreamedInChunks(): void
    {
        new Psr7Worker(new HttpWorker(new Worker(new StreamRelay($this->pair[0], $this->pair[0])))); // loads Nyholm
        $small = Psr7Worker::fromResponse(new \Nyholm\Psr7\Response(200, [], 'tiny'));
        self::assertNull($small->getParts());
        self::assertSame('tiny', $small->body);
        $size = Response::SPOOL_THRESHOLD + 10;
        // From a php://temp resource, whose reads give what is asked: Nyholm 1.6+ wraps a
        // large string in a user stream, which PHP reads 8 KiB at a time.
        $temp = fopen('php://temp', 'r+');
        fwrite($temp, str_repeat('z', $size));
        rewind($temp);
        $answer = Psr7Worker::fromResponse(new \Nyholm\Psr7\Response(200, [], Stream::create($temp)));
        $parts = $answer->getParts();
        self::assertNotNull($parts);
        $sizes = [];
        foreach ($parts as $part) {
            $sizes[] = \strlen($part);
        }
        self::assertSame([...array_fill(0, intdiv($size, Psr7Worker::CHUNK), Psr7Worker::CHUNK), 10], $sizes);
    }
}
