<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameException;
use Ferry\Worker\FrameParser;
use PHPUnit\Framework\TestCase;

final class FrameCodecTest extends TestCase
{
    // A job frame laid out by hand from docs/protocol.md: version 1 / 5 header words,
    // CODEC_RAW, length 11, CRC32 of the first 6 bytes, no stream flags, options 5 and 7.
    private const JOB_HEX = '15' . '04' . '0b000000' . '4a1358c0' . '00' . '00' . '05000000' . '07000000'
        . '68656c6c6f20776f726c64';

    public function testEncodeMatchesTheDocumentedLayout(): void
    {
        self::assertSame(self::JOB_HEX, bin2hex(FrameCodec::encode(Frame::CODEC_RAW, [5, 7], 'hello world')));
    }

    public function testJobIsEncodeWithoutTheChecks(): void
    {
        self::assertSame(self::JOB_HEX, bin2hex(FrameCodec::job(5, 7, 'hello world')));
        self::assertSame(
            FrameCodec::encode(Frame::CODEC_RAW, [0, 0xFFFFFFFF], ''),
            FrameCodec::job(0, 0xFFFFFFFF, '')
        );
    }

    public function testDecodeReturnsEveryField(): void
    {
        $frame = (new FrameCodec())->decode(hex2bin(self::JOB_HEX));
        self::assertSame(Frame::CODEC_RAW, $frame->flags);
        self::assertSame([5, 7], $frame->options);
        self::assertSame('hello world', $frame->payload);
        self::assertSame(0, $frame->streamFlags);
    }

    public function testRoundTripKeepsExtremeValues(): void
    {
        $codec = new FrameCodec();
        $options = [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 65536, 3, 4, 5, 6, 7];
        $payload = random_bytes(70000);
        $frame = $codec->decode(FrameCodec::encode(0xFF, $options, $payload, 0xFF));
        self::assertSame(0xFF, $frame->flags);
        self::assertSame(0xFF, $frame->streamFlags);
        self::assertSame($options, $frame->options);
        self::assertSame($payload, $frame->payload);
    }

    /**
     * @return iterable<string, array{int, list<mixed>, int, string}>
     */
    public static function badEncodeInput(): iterable
    {
        yield 'eleven options' => [0, array_fill(0, 11, 1), 0, FrameException::REASON_OPTIONS];
        yield 'negative option' => [0, [-1], 0, FrameException::REASON_OPTIONS];
        yield 'option above uint32' => [0, [0x100000000], 0, FrameException::REASON_OPTIONS];
        yield 'string option' => [0, ['1'], 0, FrameException::REASON_OPTIONS];
        yield 'flags above a byte' => [0x100, [], 0, FrameException::REASON_INVALID];
        yield 'stream flags above a byte' => [0, [], 0x100, FrameException::REASON_INVALID];
    }

    /**
     * @dataProvider badEncodeInput
     * @param list<mixed> $options
     */
    public function testEncodeRejectsValuesThatDoNotFit(int $flags, array $options, int $stream, string $reason): void
    {
        try {
            FrameCodec::encode($flags, $options, 'x', $stream);
            self::fail('encode accepted invalid input');
        } catch (FrameException $e) {
            self::assertSame($reason, $e->reason);
        }
    }

    public function testPayloadLimitIsCheckedFromTheHeaderAlone(): void
    {
        // Only the 12 header bytes exist: the size must be refused before waiting for the rest.
        $header = substr(FrameCodec::encode(Frame::CODEC_RAW, [], str_repeat('a', 2000)), 0, 12);
        $parser = new FrameParser(new FrameCodec(1000));
        $parser->push($header);
        $this->expectExceptionObject(new FrameException(FrameException::REASON_TOO_LARGE, 'payload of 2000 bytes at offset 0 exceeds the limit of 1000 bytes'));
        $parser->next();
    }

    public function testPayloadAtTheLimitIsAccepted(): void
    {
        $frame = (new FrameCodec(1000))->decode(FrameCodec::encode(0, [], str_repeat('a', 1000)));
        self::assertSame(1000, \strlen($frame->payload));
    }

    public function testDecodeNamesTrailingBytes(): void
    {
        $this->expectException(FrameException::class);
        $this->expectExceptionMessage('trailing data');
        (new FrameCodec())->decode(FrameCodec::encode(0, [], 'a') . 'x');
    }

    public function testParserReassemblesFramesFedByteByByte(): void
    {
        $frames = [
            FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":1}'),
            FrameCodec::encode(Frame::CODEC_RAW, [2, 9], 'ctxbody'),
            FrameCodec::encode(Frame::ERROR, [0, 10], ''),
        ];
        $parser = new FrameParser();
        $decoded = [];
        foreach (str_split(implode('', $frames)) as $byte) {
            $parser->push($byte);
            while (($frame = $parser->next()) !== null) {
                $decoded[] = $frame;
            }
        }
        self::assertCount(3, $decoded);
        self::assertSame('{"pid":1}', $decoded[0]->payload);
        self::assertSame([2, 9], $decoded[1]->options);
        self::assertSame('ctxbody', $decoded[1]->payload);
        self::assertSame(Frame::ERROR, $decoded[2]->flags);
        self::assertSame(0, $parser->buffered());
    }

    public function testParserHandlesALargeFrameSplitInRelaySizedChunks(): void
    {
        $payload = random_bytes(3 * 1024 * 1024 + 17);
        $stream = FrameCodec::encode(Frame::CODEC_RAW, [0, 1], $payload) . FrameCodec::encode(Frame::CODEC_RAW, [0, 2], 'next');
        $parser = new FrameParser();
        $frames = [];
        foreach (str_split($stream, 65536) as $chunk) {
            $parser->push($chunk);
            array_push($frames, ...$parser->drain());
        }
        self::assertCount(2, $frames);
        self::assertSame($payload, $frames[0]->payload);
        self::assertSame('next', $frames[1]->payload);
    }

    public function testParserStopsAtACorruptHeaderAfterValidFrames(): void
    {
        $good = FrameCodec::encode(Frame::CODEC_RAW, [0, 1], 'ok');
        $bad = FrameCodec::encode(Frame::CODEC_RAW, [0, 2], 'ko');
        $bad[7] = \chr(\ord($bad[7]) ^ 0x01);
        $parser = new FrameParser();
        $parser->push($good . $bad);
        self::assertSame('ok', $parser->next()?->payload);
        try {
            $parser->next();
            self::fail('corrupt CRC accepted');
        } catch (FrameException $e) {
            self::assertSame(FrameException::REASON_CRC, $e->reason);
            self::assertStringContainsString('offset', $e->getMessage());
        }
    }
}
