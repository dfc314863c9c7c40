<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameException;
use Ferry\Worker\FrameParser;
use PHPUnit\Framework\TestCase;

/**
 * Hostile input: whatever the bytes, decoding either yields frames or throws
 * FrameException, never another error, and never allocates beyond the payload limit.
 */
final class FrameFuzzTest extends TestCase
{
    private const LIMIT = 4096;

    public function testRandomBytesOnlyRaiseFrameException(): void
    {
        mt_srand(1001);
        $codec = new FrameCodec(self::LIMIT);
        $outcomes = ['frame' => 0, 'error' => 0];
        for ($i = 0; $i < 3000; $i++) {
            $bytes = self::randomBytes(mt_rand(0, 64));
            $outcomes[$this->decodeOutcome($codec, $bytes)]++;
        }
        self::assertGreaterThan(0, $outcomes['error']);
    }

    public function testMutatedFramesOnlyRaiseFrameException(): void
    {
        mt_srand(2002);
        $codec = new FrameCodec(self::LIMIT);
        $seeds = [
            FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":42}'),
            FrameCodec::encode(Frame::CODEC_RAW, [3, 17], 'ctxhello'),
            FrameCodec::encode(Frame::ERROR, array_fill(0, 10, 0xFFFFFFFF), str_repeat("\xff", 100)),
        ];
        $outcomes = ['frame' => 0, 'error' => 0];
        for ($i = 0; $i < 6000; $i++) {
            $bytes = $seeds[$i % 3];
            for ($n = mt_rand(1, 4); $n > 0; $n--) {
                $bytes = self::mutate($bytes);
            }
            $outcomes[$this->decodeOutcome($codec, $bytes)]++;
        }
        self::assertGreaterThan(0, $outcomes['error']);
        self::assertGreaterThan(0, $outcomes['frame'], 'payload-only mutations keep valid frames');
    }

    public function testStreamingParserSurvivesGarbageInRandomChunks(): void
    {
        mt_srand(3003);
        for ($i = 0; $i < 500; $i++) {
            $stream = FrameCodec::encode(Frame::CODEC_RAW, [0, $i], 'a') . self::randomBytes(mt_rand(0, 200));
            $parser = new FrameParser(new FrameCodec(self::LIMIT));
            try {
                while ($stream !== '') {
                    $take = mt_rand(1, 40);
                    $parser->push(substr($stream, 0, $take));
                    $stream = (string) substr($stream, $take);
                    foreach ($parser->drain() as $frame) {
                        self::assertLessThanOrEqual(self::LIMIT, \strlen($frame->payload));
                    }
                }
            } catch (FrameException $e) {
                self::assertContains($e->reason, ['crc', 'version', 'options', 'too_large']);
            }
        }
    }

    private function decodeOutcome(FrameCodec $codec, string $bytes): string
    {
        try {
            $frame = $codec->decode($bytes);
            self::assertLessThanOrEqual(self::LIMIT, \strlen($frame->payload));
            self::assertLessThanOrEqual(10, \count($frame->options));

            return 'frame';
        } catch (FrameException $e) {
            self::assertNotSame('', $e->getMessage());

            return 'error';
        }
    }

    private static function randomBytes(int $length): string
    {
        $bytes = '';
        for ($i = 0; $i < $length; $i++) {
            $bytes .= \chr(mt_rand(0, 255));
        }

        return $bytes;
    }

    private static function mutate(string $bytes): string
    {
        $length = \strlen($bytes);
        $at = mt_rand(0, max(0, $length - 1));

        return match (mt_rand(0, 3)) {
            0 => substr_replace($bytes, \chr(\ord($bytes[$at] ?? "\0") ^ (1 << mt_rand(0, 7))), $at, 1),
            1 => substr($bytes, 0, $at),
            2 => substr_replace($bytes, self::randomBytes(mt_rand(1, 8)), $at, 0),
            default => substr_replace($bytes, '', $at, mt_rand(1, 4)),
        };
    }
}
