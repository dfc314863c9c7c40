<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Ext\Timestamp;
use Ferry\MsgPack\Options;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Type\Bin;
use Ferry\MsgPack\Type\Map;
use PHPUnit\Framework\TestCase;

/**
 * Runs every case of kawanet/msgpack-test-suite (tests/fixtures): each listed encoding must
 * decode to the case's value, and the packer's output must be one of the listed encodings.
 */
final class SuiteTest extends TestCase
{
    /** @return iterable<string, array{string, object}> */
    public static function cases(): iterable
    {
        $suite = json_decode(
            (string) file_get_contents(__DIR__ . '/fixtures/msgpack-test-suite.json'),
            false,
            512,
            JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING,
        );
        foreach (get_object_vars($suite) as $file => $list) {
            foreach ($list as $i => $case) {
                yield "$file #$i" => [$file, $case];
            }
        }
    }

    public function testSuiteHasAllCases(): void
    {
        $n = 0;
        foreach (self::cases() as $_) {
            ++$n;
        }
        // The 1.0.0 suite has 85 cases across 15 files; a truncated fixture must not pass silently.
        self::assertSame(85, $n);
    }

    /** @dataProvider cases */
    public function testEveryEncodingDecodes(string $file, object $case): void
    {
        [$kind, $value] = self::kindAndValue($case);
        self::assertNotEmpty($case->msgpack);
        foreach ($case->msgpack as $hex) {
            $bytes = self::bytes($hex);
            $options = $kind === 'bignum' ? Options::BIGINT_AS_GMP : 0;
            $u = new BufferUnpacker($bytes, $options);
            $got = $u->unpack();
            self::assertFalse($u->hasRemaining(), "$hex: trailing bytes");
            self::assertDecoded($kind, $value, $got, $hex);

            // Byte-at-a-time streaming must give the same value.
            $s = new BufferUnpacker('', $options);
            $values = [];
            foreach (str_split($bytes) as $byte) {
                $s->append($byte);
                array_push($values, ...$s->tryUnpack());
            }
            self::assertCount(1, $values, "$hex streamed");
            self::assertDecoded($kind, $value, $values[0], "$hex streamed");
        }
    }

    /** @dataProvider cases */
    public function testPackerOutputIsListed(string $file, object $case): void
    {
        [$kind, $value] = self::kindAndValue($case);
        $input = self::packInput($kind, $value);
        $packed = (new Packer())->pack($input);
        $hex = implode('-', str_split(bin2hex($packed), 2));
        self::assertContains($hex, $case->msgpack, "$file packed as $hex");
    }

    /** @return array{string, mixed} */
    private static function kindAndValue(object $case): array
    {
        foreach (get_object_vars($case) as $k => $v) {
            if ($k === 'bignum') {
                return ['bignum', $v];
            }
        }
        foreach (get_object_vars($case) as $k => $v) {
            if ($k !== 'msgpack') {
                return [$k, $v];
            }
        }
        throw new \LogicException('case without value');
    }

    private static function bytes(string $hex): string
    {
        return (string) hex2bin(str_replace('-', '', $hex));
    }

    private static function assertDecoded(string $kind, mixed $want, mixed $got, string $hex): void
    {
        switch ($kind) {
            case 'number':
                // Integers may legitimately arrive as float32/float64 encodings.
                if (\is_float($got)) {
                    self::assertSame((float) $want, $got, $hex);
                } else {
                    self::assertSame($want, $got, $hex);
                }
                return;
            case 'bignum':
                $g = $got instanceof \GMP ? $got : gmp_init(\is_float($got) ? sprintf('%.0f', $got) : (string) $got);
                self::assertSame($want, gmp_strval($g), $hex);
                return;
            case 'binary':
                self::assertSame(self::bytes($want), $got, $hex);
                return;
            case 'timestamp':
                self::assertEquals(new Timestamp($want[0], $want[1]), $got, $hex);
                return;
            case 'ext':
                self::assertEquals(new RawExt($want[0], self::bytes($want[1])), $got, $hex);
                return;
            default:
                self::assertSame(self::plain($want), $got, $hex);
        }
    }

    /** JSON objects become PHP arrays, as the unpacker returns maps. */
    private static function plain(mixed $v): mixed
    {
        if (\is_object($v)) {
            $v = get_object_vars($v);
        }
        return \is_array($v) ? array_map(self::plain(...), $v) : $v;
    }

    private static function packInput(string $kind, mixed $v): mixed
    {
        return match ($kind) {
            'bignum' => gmp_init($v),
            'binary' => new Bin(self::bytes($v)),
            'timestamp' => new Timestamp($v[0], $v[1]),
            'ext' => new RawExt($v[0], self::bytes($v[1])),
            default => self::packable($v),
        };
    }

    /** JSON objects must stay maps even when empty or list-like. */
    private static function packable(mixed $v): mixed
    {
        if (\is_object($v)) {
            return new Map(array_map(self::packable(...), get_object_vars($v)));
        }
        return \is_array($v) ? array_map(self::packable(...), $v) : $v;
    }
}
