<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameException;
use Ferry\Worker\FrameParser;
use PHPUnit\Framework\TestCase;

/**
 * Checks the PHP codec against testdata/frames.json, written by the Go side, so both
 * implementations agree byte for byte and on the reason each invalid frame is refused.
 */
final class FrameVectorsTest extends TestCase
{
    /**
     * @return list<array<string, mixed>>
     */
    private static function vectors(): array
    {
        $file = getenv('FERRY_FRAME_VECTORS') ?: \dirname(__DIR__, 3) . '/testdata/frames.json';
        if (!is_file($file)) {
            throw new \RuntimeException("shared frame vectors not found at $file (written by the Go tests)");
        }

        return json_decode((string) file_get_contents($file), true, 16, JSON_THROW_ON_ERROR);
    }

    /**
     * @return iterable<string, array{array<string, mixed>}>
     */
    public static function validVectors(): iterable
    {
        foreach (self::vectors() as $vector) {
            if (!isset($vector['error'])) {
                yield $vector['name'] => [$vector];
            }
        }
    }

    /**
     * @return iterable<string, array{array<string, mixed>}>
     */
    public static function invalidVectors(): iterable
    {
        foreach (self::vectors() as $vector) {
            if (isset($vector['error'])) {
                yield $vector['name'] => [$vector];
            }
        }
    }

    public function testTheFileHasBothKindsOfVectors(): void
    {
        self::assertGreaterThanOrEqual(3, iterator_count(self::validVectors()));
        $reasons = array_column(array_column(iterator_to_array(self::invalidVectors()), 0), 'error');
        foreach (['crc', 'version', 'options', 'too_large', 'truncated'] as $reason) {
            self::assertContains($reason, $reasons, "no invalid vector for $reason");
        }
    }

    /**
     * @dataProvider validVectors
     * @param array<string, mixed> $v
     */
    public function testDecodesToTheSameFields(array $v): void
    {
        $frame = (new FrameCodec())->decode(hex2bin($v['frame_hex']));
        self::assertSame($v['flags'], $frame->flags);
        self::assertSame($v['stream_flags'], $frame->streamFlags);
        self::assertSame($v['options'] ?? [], $frame->options);
        self::assertSame($v['payload_hex'], bin2hex($frame->payload));
    }

    /**
     * @dataProvider validVectors
     * @param array<string, mixed> $v
     */
    public function testEncodesToTheSameBytes(array $v): void
    {
        $bytes = FrameCodec::encode($v['flags'], $v['options'] ?? [], hex2bin($v['payload_hex']), $v['stream_flags']);
        self::assertSame($v['frame_hex'], bin2hex($bytes));
    }

    /**
     * @dataProvider invalidVectors
     * @param array<string, mixed> $v
     */
    public function testRejectsWithTheSameReason(array $v): void
    {
        try {
            (new FrameCodec())->decode(hex2bin($v['frame_hex']));
            self::fail("{$v['name']} was accepted");
        } catch (FrameException $e) {
            self::assertSame($v['error'], $e->reason, $e->getMessage());
        }
    }

    /**
     * The streaming parser must agree too; truncation is not an error there, just "wait".
     *
     * @dataProvider invalidVectors
     * @param array<string, mixed> $v
     */
    public function testStreamingParserAgrees(array $v): void
    {
        $parser = new FrameParser();
        $parser->push(hex2bin($v['frame_hex']));
        try {
            $frame = $parser->next();
            self::assertSame('truncated', $v['error'], "{$v['name']} was accepted by the parser");
            self::assertNull($frame);
        } catch (FrameException $e) {
            self::assertSame($v['error'], $e->reason, $e->getMessage());
        }
    }
}
