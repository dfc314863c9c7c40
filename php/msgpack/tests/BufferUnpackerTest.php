<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Ext\Timestamp;
use Ferry\MsgPack\InsufficientData;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Options;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Type\Bin;
use PHPUnit\Framework\TestCase;

final class BufferUnpackerTest extends TestCase
{
    private static function sample(): array
    {
        return [
            'id' => 1, 'neg' => -200, 'u32' => 0xffffffff, 'i64' => PHP_INT_MIN, 'f' => 0.25,
            'list' => [null, true, false, str_repeat('s', 40), str_repeat('m', 300)],
            'nested' => [[[]], ['k' => ['v']]], 'ts' => new Timestamp(1, 2), 7 => 'int key',
        ];
    }

    public function testEveryTruncationRewindsAndResumes(): void
    {
        $bytes = (new Packer())->pack(self::sample());
        for ($cut = 0; $cut < \strlen($bytes); ++$cut) {
            $u = new BufferUnpacker(substr($bytes, 0, $cut));
            try {
                $u->unpack();
                self::fail("decoded a value cut at $cut");
            } catch (InsufficientData $e) {
                self::assertGreaterThanOrEqual(1, $u->missing(), "cut $cut");
                self::assertSame($u->missing(), $e->getMissing());
                self::assertLessThanOrEqual(\strlen($bytes) - $cut, $u->missing(), "cut $cut: over-estimate");
                self::assertSame($cut, $u->remaining(), 'nothing consumed');
            }
            $u->append(substr($bytes, $cut));
            self::assertEquals(self::sample(), $u->unpack());
            self::assertFalse($u->hasRemaining());
        }
    }

    public function testMissingIsExactForLengthPrefixedValues(): void
    {
        $u = new BufferUnpacker("\xd9\x10abc");
        self::assertSame([], $u->tryUnpack());
        self::assertSame(13, $u->missing());
        $u->append('defghij');
        self::assertSame([], $u->tryUnpack());
        self::assertSame(6, $u->missing());
        $u->append('klmnop' . "\x01");
        self::assertSame(['abcdefghijklmnop', 1], $u->tryUnpack());
        self::assertSame(1, $u->missing(), 'nothing buffered: at least one byte needed');
        self::assertSame([], $u->tryUnpack());
    }

    public function testTryUnpackReturnsAllCompleteValues(): void
    {
        $p = new Packer();
        $u = new BufferUnpacker();
        $u->append($p->pack(1) . $p->pack('two') . $p->pack([3]) . substr($p->pack('four'), 0, 2));
        self::assertSame([1, 'two', [3]], $u->tryUnpack());
        self::assertTrue($u->hasRemaining());
        self::assertSame(2, $u->remaining());
        $u->append('our');
        self::assertSame(['four'], $u->tryUnpack());
        self::assertSame(0, $u->remaining());
    }

    public function testCompactionKeepsStreamOffsets(): void
    {
        $p = new Packer();
        $msg = $p->pack(['payload' => str_repeat('p', 1000)]);
        $u = new BufferUnpacker();
        $n = 0;
        for ($i = 0; $i < 300; ++$i) {
            // Append in odd-sized chunks so values straddle appends and the buffer never drains.
            foreach (str_split($msg, 333) as $part) {
                $u->append($part);
                $n += \count($u->tryUnpack());
            }
            self::assertLessThan(\strlen($msg), $u->remaining());
            // White-box: consumed bytes must be dropped, not kept (and copied) forever.
            $buf = (new \ReflectionProperty(BufferUnpacker::class, 'buf'))->getValue($u);
            self::assertLessThan(2 * 65536 + 2 * \strlen($msg), \strlen($buf));
        }
        self::assertSame(300, $n);
        $u->append("\xc1");
        try {
            $u->unpack();
            self::fail('0xc1 accepted');
        } catch (MsgPackException $e) {
            self::assertNotInstanceOf(InsufficientData::class, $e);
            self::assertSame(300 * \strlen($msg), $e->getOffset(), 'offset counts compacted bytes');
            self::assertSame(300 * \strlen($msg), $u->position());
            self::assertStringContainsString('0xc1', $e->getMessage());
        }
    }

    public function testResetRestartsOffsets(): void
    {
        $u = new BufferUnpacker("\x01\x02");
        self::assertSame(1, $u->unpack());
        $u->reset("\xc1");
        try {
            $u->unpack();
            self::fail('0xc1 accepted');
        } catch (MsgPackException $e) {
            self::assertSame(0, $e->getOffset());
        }
    }

    /** @return iterable<string, array{string, string}> */
    public static function hostile(): iterable
    {
        yield 'array32 count 2^32-1' => ["\xdd\xff\xff\xff\xff\x01\x02", 'array of 4294967295'];
        yield 'map32 count 2^32-1' => ["\xdf\xff\xff\xff\xff\x01\x02", 'map of 4294967295'];
        yield 'str32 4 GiB' => ["\xdb\xff\xff\xff\xffabc", 'str32 of 4294967295'];
        yield 'bin32 4 GiB' => ["\xc6\xff\xff\xff\xffabc", 'bin32 of 4294967295'];
        yield 'ext32 4 GiB' => ["\xc9\xff\xff\xff\xff\x05abc", 'ext of 4294967295'];
        yield 'array16 nested claims' => [str_repeat("\xdc\xff\xff", 100), 'array of 65535'];
        yield 'map16 in array' => ["\x92\xde\xff\xff", 'map of 65535'];
        yield 'str16 in map' => ["\x81\xa1k\xda\xff\xff", 'str16 of 65535'];
    }

    /** @dataProvider hostile */
    public function testLengthsBeyondTheBufferFailBeforeAllocating(string $bytes, string $reason): void
    {
        $before = memory_get_usage();
        $u = new BufferUnpacker($bytes);
        try {
            $u->unpack();
            self::fail('hostile length accepted');
        } catch (InsufficientData $e) {
            self::assertStringContainsString($reason, $e->getMessage());
            self::assertGreaterThan(60000, $e->getMissing());
        }
        self::assertLessThan(1 << 20, memory_get_usage() - $before);
        // As a complete message (the usual case for a framed protocol) this is plain invalid input.
        self::assertInstanceOf(MsgPackException::class, $e);
    }

    public function testNestingLimit(): void
    {
        $ok = str_repeat("\x91", 512) . "\x01";
        self::assertIsArray((new BufferUnpacker($ok))->unpack());
        foreach (["\x91", "\x81\x01", "\xdc\x00\x01", "\xde\x00\x01\x01"] as $open) {
            $deep = str_repeat($open, 513) . "\x01";
            try {
                (new BufferUnpacker($deep))->unpack();
                self::fail('nesting limit not enforced for ' . bin2hex($open));
            } catch (MsgPackException $e) {
                self::assertStringContainsString('nesting deeper than 512', $e->getMessage());
                self::assertSame(512 * \strlen($open), $e->getOffset());
            }
        }
        $u = new BufferUnpacker("\x91\x91\x91\x01", 0, null, 2);
        $this->expectExceptionMessage('nesting deeper than 2 levels');
        $u->unpack();
    }

    public function testMapKeys(): void
    {
        self::assertSame(['a' => 1, 2 => 'b', 'bin' => 3], (new BufferUnpacker("\x83\xa1a\x01\x02\xa1b\xc4\x03bin\x03"))->unpack());
        self::assertSame([1 => 'x'], (new BufferUnpacker("\x81\xa11\xa1x"))->unpack(), 'numeric string keys become ints (PHP)');
        self::assertSame(['a' => 2], (new BufferUnpacker("\x82\xa1a\x01\xa1a\x02"))->unpack(), 'last duplicate wins');
        $bad = [
            'nil' => "\x81\xc0\x01", 'true' => "\x81\xc3\x01", 'float' => "\x81\xcb\x3f\xf0\0\0\0\0\0\0\x01",
            'array' => "\x81\x91\x01\x01", 'map' => "\x81\x80\x01", 'map16' => "\x81\xde\x00\x00\x01",
            'nonempty map' => "\x81\x81\x01\x01\x01", 'ext' => "\x81\xd4\x05\x00\x01", 'timestamp' => "\x81\xd6\xff\0\0\0\0\x01",
        ];
        foreach ($bad as $what => $bytes) {
            try {
                (new BufferUnpacker("\x92\x00" . $bytes))->unpack();
                self::fail("$what key accepted");
            } catch (MsgPackException $e) {
                self::assertNotInstanceOf(InsufficientData::class, $e, $what);
                self::assertStringContainsString('map key of type', $e->getMessage(), $what);
                self::assertSame(3, $e->getOffset(), "$what: offset of the key");
            }
        }
    }

    public function testBigIntOptions(): void
    {
        $max = "\xcf\xff\xff\xff\xff\xff\xff\xff\xff";
        self::assertSame('18446744073709551615', (new BufferUnpacker($max))->unpack());
        self::assertSame('18446744073709551615', (new BufferUnpacker($max, Options::BIGINT_AS_STR))->unpack());
        $g = (new BufferUnpacker($max, Options::BIGINT_AS_GMP))->unpack();
        self::assertInstanceOf(\GMP::class, $g);
        self::assertSame('18446744073709551615', gmp_strval($g));
        self::assertSame(1.8446744073709552E+19, (new BufferUnpacker($max, Options::BIGINT_AS_FLOAT))->unpack());
        self::assertSame(PHP_INT_MAX, (new BufferUnpacker("\xcf\x7f\xff\xff\xff\xff\xff\xff\xff"))->unpack());
        self::assertSame(['18446744073709551615' => 1], (new BufferUnpacker("\x81" . $max . "\x01", Options::BIGINT_AS_GMP))->unpack());
        // uint64 map keys: the same decimal string key in every mode; values keep their mode.
        $map = "\x82" . $max . "\x01\x01" . $max;
        foreach ([0, Options::BIGINT_AS_STR, Options::BIGINT_AS_GMP, Options::BIGINT_AS_FLOAT] as $mode) {
            $v = (new BufferUnpacker($map, $mode))->unpack();
            self::assertSame(['18446744073709551615', 1], array_keys($v), "mode $mode");
            self::assertSame(1, $v['18446744073709551615'], "mode $mode");
        }
        self::assertSame(1.8446744073709552E+19, (new BufferUnpacker($map, Options::BIGINT_AS_FLOAT))->unpack()[1]);
        $this->expectException(\InvalidArgumentException::class);
        new BufferUnpacker('', Options::BIGINT_AS_GMP | Options::BIGINT_AS_FLOAT);
    }

    public function testBinAsObject(): void
    {
        $u = new BufferUnpacker("\x92\xc4\x01x\xa1y", Options::BIN_AS_OBJECT);
        self::assertEquals([new Bin('x'), 'y'], $u->unpack());
        self::assertSame("\x92\xc4\x01x\xa1y", (new Packer())->pack([new Bin('x'), 'y']));
    }

    public function testFastPaths(): void
    {
        $p = new Packer();
        $ints = [0, 127, 128, 255, 65535, 65536, 0xffffffff, PHP_INT_MAX, -1, -32, -33, -200, -40000, -3000000000, PHP_INT_MIN];
        $data = $p->packArrayHeader(3) . $p->packArrayHeader(20) . $p->packArrayHeader(70000)
            . $p->packMapHeader(1) . $p->packMapHeader(17) . $p->packMapHeader(70000);
        foreach ($ints as $i) {
            $data .= $p->packInt($i);
        }
        $strs = ['', 'short', str_repeat('a', 40), str_repeat('b', 300), str_repeat('c', 70000)];
        foreach ($strs as $s) {
            $data .= $p->packStr($s) . $p->packBin($s);
        }
        $u = new BufferUnpacker($data);
        self::assertSame([3, 20, 70000], [$u->unpackArrayHeader(), $u->unpackArrayHeader(), $u->unpackArrayHeader()]);
        self::assertSame([1, 17, 70000], [$u->unpackMapHeader(), $u->unpackMapHeader(), $u->unpackMapHeader()]);
        foreach ($ints as $i) {
            self::assertSame($i, $u->unpackInt());
        }
        foreach ($strs as $s) {
            self::assertSame($s, $u->unpackStr());
            self::assertSame($s, $u->unpackStr());
        }
        self::assertFalse($u->hasRemaining());
    }

    public function testFastPathsRejectOtherTypesWithoutConsuming(): void
    {
        $u = new BufferUnpacker("\xa1x");
        foreach (['unpackInt' => 'int', 'unpackArrayHeader' => 'array', 'unpackMapHeader' => 'map'] as $m => $want) {
            try {
                $u->$m();
                self::fail("$m accepted a str");
            } catch (MsgPackException $e) {
                self::assertStringContainsString("expected $want, got type byte 0xa1", $e->getMessage());
                self::assertSame(0, $u->position());
            }
        }
        self::assertSame('x', $u->unpackStr());
        $u = new BufferUnpacker("\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
        try {
            $u->unpackInt();
            self::fail('uint64 above PHP_INT_MAX returned as int');
        } catch (MsgPackException $e) {
            self::assertStringContainsString('does not fit', $e->getMessage());
            self::assertSame(0, $u->position());
        }
        $u = new BufferUnpacker("\xdc\x00");
        $this->expectException(InsufficientData::class);
        $u->unpackArrayHeader();
    }

    public function testInvalidTypeByteReportsOffset(): void
    {
        $u = new BufferUnpacker("\x93\x01\x02\xc1");
        try {
            $u->unpack();
            self::fail('0xc1 accepted');
        } catch (MsgPackException $e) {
            self::assertSame(3, $e->getOffset());
            self::assertSame('MessagePack error at offset 3: invalid type byte 0xc1 (never used)', $e->getMessage());
            self::assertSame(0, $u->position(), 'left at the start of the bad value');
            self::assertSame(0, $u->missing(), 'a complete (bad) value is buffered');
        }
    }

    public function testExtensionContracts(): void
    {
        $exts = Extensions::tarantool();
        // A decimal whose BCD claims more data than the ext payload holds must not wait for more bytes.
        $bad = ["\xd5\x01\xcd\x00" => 'ends early', "\xd4\x01\xda" => 'expected int', "\xd5\x02\x00\x00" => 'uuid payload is 2 bytes',
            "\xd6\xff\x00\x00\x00\x00"  => null, "\xd5\xff\x00\x00" => 'timestamp payload of 2 bytes',
            "\xc7\x0c\xff\xff\xff\xff\xff\0\0\0\0\0\0\0\0" => 'nanoseconds', "\xd4\x03\x01" => 'error extension payload'];
        foreach ($bad as $bytes => $reason) {
            $u = new BufferUnpacker($bytes . "\x01", 0, $exts);
            if ($reason === null) {
                self::assertEquals(new Timestamp(0), $u->unpack());
                continue;
            }
            try {
                $u->unpack();
                self::fail('accepted ' . bin2hex($bytes));
            } catch (MsgPackException $e) {
                self::assertNotInstanceOf(InsufficientData::class, $e, bin2hex($bytes));
                self::assertStringContainsString($reason, $e->getMessage(), bin2hex($bytes));
                self::assertSame(0, $u->position());
            }
            self::assertSame(1 + \strlen($bytes), $u->remaining());
        }
    }
}
