<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Options;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Type\Arr;
use Ferry\MsgPack\Type\Bin;
use Ferry\MsgPack\Type\Map;
use Ferry\MsgPack\Type\Str;
use PHPUnit\Framework\TestCase;

final class PackerTest extends TestCase
{
    /** @return iterable<string, array{int, string}> */
    public static function ints(): iterable
    {
        $cases = [
            [0, '00'], [127, '7f'], [128, 'cc80'], [255, 'ccff'], [256, 'cd0100'], [65535, 'cdffff'],
            [65536, 'ce00010000'], [0xffffffff, 'ceffffffff'], [0x100000000, 'cf0000000100000000'],
            [PHP_INT_MAX, 'cf7fffffffffffffff'], [-1, 'ff'], [-32, 'e0'], [-33, 'd0df'], [-128, 'd080'],
            [-129, 'd1ff7f'], [-32768, 'd18000'], [-32769, 'd2ffff7fff'], [-2147483648, 'd280000000'],
            [-2147483649, 'd3ffffffff7fffffff'], [PHP_INT_MIN, 'd38000000000000000'],
        ];
        foreach ($cases as [$v, $hex]) {
            yield (string) $v => [$v, $hex];
        }
    }

    /** @dataProvider ints */
    public function testIntegersUseTheSmallestEncoding(int $v, string $hex): void
    {
        $p = new Packer();
        self::assertSame($hex, bin2hex($p->pack($v)));
        self::assertSame($hex, bin2hex($p->packInt($v)));
        self::assertSame('91' . $hex, bin2hex($p->pack([$v])), 'inline path in lists');
        self::assertSame('8100' . $hex, bin2hex($p->pack(new \Ferry\MsgPack\Type\Map([$v]))), 'inline path in maps');
        if ($v !== 0) {
            self::assertSame('81' . $hex . '00', bin2hex($p->pack([$v => 0])), 'int keys');
        }
        self::assertSame($v, (new BufferUnpacker(hex2bin($hex)))->unpack());
    }

    public function testScalars(): void
    {
        $p = new Packer();
        self::assertSame('c0', bin2hex($p->pack(null)));
        self::assertSame('c2', bin2hex($p->pack(false)));
        self::assertSame('c3', bin2hex($p->pack(true)));
        self::assertSame('cb3ff8000000000000', bin2hex($p->pack(1.5)));
        self::assertSame('ca3fc00000', bin2hex((new Packer(Options::FORCE_FLOAT32))->pack(1.5)));
        self::assertSame('ca3fc00000', bin2hex($p->packFloat32(1.5)));
        self::assertSame('cb7ff0000000000000', bin2hex($p->pack(INF)));
        self::assertNan((new BufferUnpacker($p->pack(NAN)))->unpack());
    }

    /** @return iterable<string, array{int, string, string}> */
    public static function lengths(): iterable
    {
        // length => expected str header, bin header
        yield '0' => [0, 'a0', 'c400'];
        yield '31' => [31, 'bf', 'c41f'];
        yield '32' => [32, 'd920', 'c420'];
        yield '255' => [255, 'd9ff', 'c4ff'];
        yield '256' => [256, 'da0100', 'c50100'];
        yield '65535' => [65535, 'daffff', 'c5ffff'];
        yield '65536' => [65536, 'db00010000', 'c600010000'];
    }

    /** @dataProvider lengths */
    public function testStringAndBinaryHeaders(int $n, string $strHeader, string $binHeader): void
    {
        $s = str_repeat('x', $n);
        $p = new Packer();
        self::assertSame($strHeader, bin2hex(substr($p->pack($s), 0, \strlen($strHeader) / 2)));
        self::assertSame(\strlen($strHeader) / 2 + $n, \strlen($p->pack($s)));
        self::assertSame($binHeader, bin2hex(substr($p->packBin($s), 0, \strlen($binHeader) / 2)));
        self::assertSame($binHeader, bin2hex(substr((new Packer(Options::FORCE_BIN))->pack($s), 0, \strlen($binHeader) / 2)));
        self::assertSame($s, (new BufferUnpacker($p->packBin($s)))->unpack());
        self::assertSame($s, (new BufferUnpacker($p->packStr($s)))->unpack());
    }

    public function testContainerHeaders(): void
    {
        $p = new Packer();
        self::assertSame('90', bin2hex($p->pack([])));
        self::assertSame('9f', bin2hex($p->packArrayHeader(15)));
        self::assertSame('dc0010', bin2hex($p->packArrayHeader(16)));
        self::assertSame('dcffff', bin2hex($p->packArrayHeader(65535)));
        self::assertSame('dd00010000', bin2hex($p->packArrayHeader(65536)));
        self::assertSame('8f', bin2hex($p->packMapHeader(15)));
        self::assertSame('de0010', bin2hex($p->packMapHeader(16)));
        self::assertSame('df00010000', bin2hex($p->packMapHeader(65536)));
        self::assertSame('dc0010' . str_repeat('01', 16), bin2hex($p->pack(array_fill(0, 16, 1))));
        $map = array_combine(range(1, 16), range(1, 16));
        self::assertSame('de0010', bin2hex(substr($p->pack($map), 0, 3)));
        $big = range(0, 70000);
        self::assertSame($big, (new BufferUnpacker($p->pack($big)))->unpack());
    }

    public function testNegativeContainerCountsThrowAndThePackerStaysUsable(): void
    {
        $p = new Packer();
        foreach ([[$p->packArrayHeader(...), -1], [$p->packMapHeader(...), -5], [$p->packArrayHeader(...), -70000], [$p->packMapHeader(...), PHP_INT_MIN]] as [$header, $n]) {
            try {
                $bytes = $header($n);
                self::fail("header for $n gave " . bin2hex($bytes));
            } catch (MsgPackException $e) {
                self::assertStringContainsString("negative count $n", $e->getMessage());
            }
        }
        self::assertSame('9180', bin2hex($p->packArrayHeader(1) . $p->packMapHeader(0)));
    }

    public function testListsBecomeArraysAndOtherArraysMaps(): void
    {
        $p = new Packer();
        self::assertSame('93010203', bin2hex($p->pack([1, 2, 3])));
        self::assertSame('8201010202', bin2hex($p->pack([1 => 1, 2 => 2])), 'not starting at 0');
        self::assertSame('820101' . '0002', bin2hex($p->pack([1 => 1, 0 => 2])), 'out of order');
        self::assertSame('81a161' . '01', bin2hex($p->pack(['a' => 1])));
        self::assertSame('81ff' . 'a178', bin2hex($p->pack([-1 => 'x'])));
    }

    public function testOptionsForceRepresentation(): void
    {
        self::assertSame('820001' . '0102', bin2hex((new Packer(Options::FORCE_MAP))->pack([1, 2])));
        self::assertSame('80', bin2hex((new Packer(Options::FORCE_MAP))->pack([])));
        self::assertSame('920102', bin2hex((new Packer(Options::FORCE_ARR))->pack(['a' => 1, 'b' => 2])));
        $detect = new Packer(Options::DETECT_STR_BIN);
        self::assertSame('a3c3a969', bin2hex($detect->pack("\xc3\xa9i")), 'valid UTF-8 is str');
        self::assertSame('c402ff00', bin2hex($detect->pack("\xff\x00")), 'invalid UTF-8 is bin');
        self::assertSame('81c40178c40179', bin2hex((new Packer(Options::FORCE_BIN))->pack(['x' => 'y'])));
    }

    public function testWrappersOverrideOptions(): void
    {
        $p = new Packer(Options::FORCE_BIN);
        self::assertSame('a26869', bin2hex($p->pack(new Str('hi'))));
        self::assertSame('c4026869', bin2hex((new Packer())->pack(new Bin('hi'))));
        self::assertSame('80', bin2hex($p->pack(new Map([]))));
        self::assertSame('8100c0', bin2hex($p->pack(new Map([null]))));
        self::assertSame('920102', bin2hex($p->pack(new Arr(['a' => 1, 'b' => 2]))));
        self::assertSame('91' . '81a16180', bin2hex((new Packer())->pack([['a' => new Map([])]])));
    }

    public function testExtHeaders(): void
    {
        $p = new Packer();
        $expect = [1 => 'd405', 2 => 'd505', 4 => 'd605', 8 => 'd705', 16 => 'd805', 0 => 'c70005', 3 => 'c70305',
            17 => 'c71105', 255 => 'c7ff05', 256 => 'c8010005', 65536 => 'c90001000005'];
        foreach ($expect as $n => $header) {
            $packed = $p->pack(new RawExt(5, str_repeat('z', $n)));
            self::assertSame($header, bin2hex(substr($packed, 0, \strlen($header) / 2)), "ext of $n bytes");
            $back = (new BufferUnpacker($packed, 0, Extensions::none()))->unpack();
            self::assertEquals(new RawExt(5, str_repeat('z', $n)), $back);
        }
        self::assertSame('d4ff00', bin2hex($p->packExt(-1, "\0")));
        $this->expectException(MsgPackException::class);
        $p->packExt(128, 'x');
    }

    public function testGmp(): void
    {
        $p = new Packer();
        self::assertSame('cfffffffffffffffff', bin2hex($p->pack(gmp_init('18446744073709551615'))));
        self::assertSame('cf8000000000000000', bin2hex($p->pack(gmp_init('9223372036854775808'))));
        self::assertSame('d38000000000000000', bin2hex($p->pack(gmp_init('-9223372036854775808'))));
        self::assertSame('2a', bin2hex($p->pack(gmp_init(42))));
        $this->expectExceptionMessage('does not fit');
        $p->pack(gmp_init('18446744073709551616'));
    }

    public function testUnsupportedValuesThrowAndThePackerStaysUsable(): void
    {
        $p = new Packer();
        foreach ([new \stdClass(), [1, [2, fopen('php://memory', 'r')]], static fn () => 1] as $bad) {
            try {
                $p->pack($bad);
                self::fail('packed ' . get_debug_type($bad));
            } catch (MsgPackException $e) {
                self::assertSame(-1, $e->getOffset());
                self::assertStringContainsString('cannot pack', $e->getMessage());
            }
        }
        $a = [1];
        $a[] = &$a;
        try {
            $p->pack($a);
            self::fail('packed a recursive array');
        } catch (MsgPackException $e) {
            self::assertStringContainsString('nesting deeper', $e->getMessage());
        }
        // A failure deep inside must not leave the depth counter raised.
        $deep = [1];
        for ($i = 0; $i < 500; ++$i) {
            $deep = [$deep];
        }
        for ($i = 0; $i < 3; ++$i) {
            try {
                $p->pack([$deep, new \stdClass()]);
            } catch (MsgPackException) {
            }
        }
        self::assertNotSame('', $p->pack($deep));
    }

    public function testContradictoryOptionsAreRejected(): void
    {
        foreach ([Options::FORCE_ARR | Options::FORCE_MAP, Options::FORCE_BIN | Options::DETECT_STR_BIN,
            Options::FORCE_FLOAT32 | Options::FORCE_FLOAT64] as $o) {
            try {
                new Packer($o);
                self::fail("accepted options $o");
            } catch (\InvalidArgumentException $e) {
                self::assertStringContainsString('Contradictory', $e->getMessage());
            }
        }
    }

    public function testExtensionsApplyToSubclassesAndCanBeReplaced(): void
    {
        $ext = new class () implements Extension {
            public function getType(): int
            {
                return 42;
            }

            public function getClass(): ?string
            {
                return \ArrayObject::class;
            }

            public function pack(Packer $packer, object $value): string
            {
                return $packer->pack($value->getArrayCopy());
            }

            public function unpack(BufferUnpacker $unpacker, int $length): mixed
            {
                return new \ArrayObject($unpacker->unpackValue());
            }
        };
        $exts = Extensions::standard()->with($ext);
        $sub = new class ([1, 2]) extends \ArrayObject {
        };
        $packed = (new Packer(0, $exts))->pack($sub);
        self::assertSame('c7032a' . '920102', bin2hex($packed));
        self::assertEquals(new \ArrayObject([1, 2]), (new BufferUnpacker($packed, 0, $exts))->unpack());
        self::assertNull(Extensions::standard()->forType(42), 'with() must not modify the original');
        self::assertInstanceOf(RawExt::class, (new BufferUnpacker($packed))->unpack());
    }
}
