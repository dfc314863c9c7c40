<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Ext;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\InsufficientData;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Native;
use Ferry\MsgPack\Options;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Tests\Support\RandomValues;
use PHPUnit\Framework\TestCase;

/**
 * With ext/ferry loaded, Packer and BufferUnpacker run its C codec; this compares them,
 * in one process, with the pure-PHP code (ferry.msgpack_php_only) on seeded random values,
 * encodings, truncations and mutations: same bytes, same values, same exceptions (class,
 * offset, reason, missing) and the same unpacker state afterwards.
 * Seeded; rerun with MSGPACK_SEED=<seed>. Skipped without the extension.
 */
final class NativeParityTest extends TestCase
{
    private const VALUES = 1500;

    protected function setUp(): void
    {
        if (!\function_exists('Ferry\Ext\msgpack_unpack')) {
            if (getenv('FERRY_TEST_EXT') === '1') {
                self::fail('FERRY_TEST_EXT=1 but ext/ferry is not loaded');
            }
            self::markTestSkipped('ext/ferry is not loaded');
        }
    }

    /** @return array{object, object} [native, pure] built by $make */
    private static function pair(\Closure $make): array
    {
        $native = $make();
        $before = \ini_get('ferry.msgpack_php_only');
        \ini_set('ferry.msgpack_php_only', '1');
        try {
            self::assertFalse(Native::available());
            $pure = $make();
        } finally {
            \ini_set('ferry.msgpack_php_only', (string) $before);
        }
        self::assertTrue(Native::available());
        return [$native, $pure];
    }

    /** What a call gave: its value or exception, in a form assertSame can compare. */
    private static function outcome(\Closure $call): string
    {
        try {
            return 'value ' . \serialize($call());
        } catch (\Throwable $e) {
            $what = \get_class($e) . ': ' . $e->getMessage();
            if ($e instanceof MsgPackException) {
                $what .= ' @' . $e->getOffset() . ' ' . $e->getReason();
            }
            if ($e instanceof InsufficientData) {
                $what .= ' missing ' . $e->getMissing();
            }
            return $what;
        }
    }

    /** Unpacks every value of $bytes with both unpackers, fed in $chunks pieces. */
    private static function assertSameDecoding(string $bytes, int $options, Extensions $exts, int $maxDepth, int $chunk, string $ctx): void
    {
        [$n, $p] = self::pair(static fn () => new BufferUnpacker('', $options, $exts, $maxDepth));
        // the whole-message path (Codec::unpack()), trailing bytes included
        self::assertSame(self::outcome(static fn () => $p->unpackMessage($bytes)), self::outcome(static fn () => $n->unpackMessage($bytes)), "$ctx (message)");
        self::assertSame([$p->position(), $p->missing(), $p->remaining()], [$n->position(), $n->missing(), $n->remaining()], "$ctx (message)");
        $n->reset();
        $p->reset();
        for ($at = 0; $at < \strlen($bytes); $at += $chunk) {
            $piece = \substr($bytes, $at, $chunk);
            $n->append($piece);
            $p->append($piece);
            for ($k = 0; $k < 100; ++$k) {
                $a = self::outcome(static fn () => $n->unpack());
                $b = self::outcome(static fn () => $p->unpack());
                self::assertSame($b, $a, $ctx);
                self::assertSame([$p->position(), $p->missing(), $p->remaining()], [$n->position(), $n->missing(), $n->remaining()], $ctx);
                if (!\str_starts_with($a, 'value ') || !$n->hasRemaining()) {
                    break;
                }
            }
            if (!\str_starts_with($a, 'value ') && !\str_starts_with($a, InsufficientData::class)) {
                return; // invalid data: both stop here
            }
        }
    }

    public function testPackedBytesAreTheSame(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $optionSets = [0, Options::FORCE_BIN, Options::FORCE_ARR, Options::FORCE_MAP, Options::FORCE_FLOAT32, Options::FORCE_BIN | Options::FORCE_MAP];
        $packers = [];
        foreach ($optionSets as $o) {
            $packers[] = self::pair(static fn () => new Packer($o, Extensions::tarantool()));
        }
        [$nStd, $pStd] = self::pair(static fn () => new Packer());
        for ($i = 0; $i < self::VALUES; ++$i) {
            $v = $g->value();
            [$n, $p] = $packers[$i % \count($packers)];
            self::assertSame(self::outcome(static fn () => $p->pack($v)), self::outcome(static fn () => $n->pack($v)), "seed $seed, value $i");
            if (\is_array($v)) {
                self::assertSame(self::outcome(static fn () => $p->packArray($v)), self::outcome(static fn () => $n->packArray($v)), "seed $seed, value $i");
                self::assertSame(self::outcome(static fn () => $p->packMap($v)), self::outcome(static fn () => $n->packMap($v)), "seed $seed, value $i");
            }
            // Without the Tarantool extensions, their objects are errors, the same ones.
            self::assertSame(self::outcome(static fn () => $pStd->pack($v)), self::outcome(static fn () => $nStd->pack($v)), "seed $seed, value $i");
        }
    }

    public function testPackErrorsAndDepthAreTheSame(): void
    {
        [$n, $p] = self::pair(static fn () => new Packer(0, Extensions::tarantool()));
        $deep = [];
        for ($i = 0; $i < 520; ++$i) {
            $deep = [$deep];
        }
        $atLimit = [];
        for ($i = 0; $i < 511; ++$i) {
            $atLimit = ['k' => $atLimit];
        }
        $recursive = [1];
        $recursive[] = &$recursive;
        $res = \fopen('php://memory', 'r');
        $cases = [
            'deep' => $deep, 'at limit' => $atLimit, 'in a Map' => [new \Ferry\MsgPack\Type\Map(['a' => $atLimit])],
            'recursive' => $recursive, 'resource' => [1, $res], 'closure' => ['x' => static fn () => 1],
            'object' => new \stdClass(), 'gmp' => [\gmp_init('18446744073709551615'), \gmp_init(-5), \gmp_init('18446744073709551616')],
            'refs' => ['a' => &$i, 'b' => [&$i]], 'types' => [new \Ferry\MsgPack\Type\Bin('x'), new \Ferry\MsgPack\Type\Str('y'), new \Ferry\MsgPack\Type\Arr(['a' => 1])],
        ];
        foreach ($cases as $name => $v) {
            self::assertSame(self::outcome(static fn () => $p->pack($v)), self::outcome(static fn () => $n->pack($v)), $name);
            // the packers still work afterwards (depth counters reset)
            self::assertSame($p->pack([[1]]), $n->pack([[1]]), $name);
        }
        \fclose($res);
    }

    public function testExtObjectsOffTheirPathPackTheSame(): void
    {
        // The C packer takes php/msgpack's own value objects itself; these must still reach the
        // Packer: objects built without their constructor, and classes given to another extension.
        $bare = [];
        foreach ([Ext\Timestamp::class, Ext\Decimal::class, Ext\Uuid::class, Ext\Datetime::class, Ext\Interval::class] as $class) {
            $bare[] = (new \ReflectionClass($class))->newInstanceWithoutConstructor();
        }
        $mine = new class () implements \Ferry\MsgPack\Extension {
            public function getType(): int
            {
                return 40;
            }

            public function getClass(): ?string
            {
                return Ext\Interval::class;
            }

            public function pack(Packer $packer, object $value): string
            {
                return 'mine';
            }

            public function unpack(BufferUnpacker $unpacker, int $length): mixed
            {
                return null;
            }
        };
        $sets = ['tarantool' => Extensions::tarantool(), 'standard' => Extensions::standard(), 'mine' => Extensions::tarantool()->with($mine)];
        $values = [...$bare, new Ext\Interval(day: 1), [new Ext\Datetime(7), ['k' => new Ext\Interval()]], Ext\Decimal::fromString('-0.5')];
        foreach ($sets as $name => $exts) {
            [$n, $p] = self::pair(static fn () => new Packer(0, $exts));
            foreach ($values as $i => $v) {
                self::assertSame(self::outcome(static fn () => $p->pack($v)), self::outcome(static fn () => $n->pack($v)), "$name, value $i");
            }
        }
    }

    public function testRandomEncodingsDecodeTheSame(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $sets = [Extensions::tarantool(), Extensions::standard(), Extensions::none()];
        $optionSets = [0, Options::BIGINT_AS_FLOAT, Options::BIN_AS_OBJECT, Options::BIGINT_AS_GMP | Options::BIN_AS_OBJECT];
        $packer = new Packer(0, Extensions::tarantool());
        for ($i = 0; $i < self::VALUES; ++$i) {
            $v = $g->value();
            // Odd widths for plain values, the packer's bytes (ext values included) otherwise.
            $bytes = $i % 2 === 0 ? $packer->pack($v) : $g->encode($g->value(0, false));
            if ($i % 5 === 0) {
                $bytes .= "\xcf" . \pack('J', -1 - $i) . "\x81\xcf" . \pack('J', -2) . "\xc4\x01z\x81\xc4\x01k\x01";
            }
            $ctx = "seed $seed, value $i: " . \bin2hex(\substr($bytes, 0, 64));
            // A few chunks per message: each one re-decodes the value from its start.
            $chunk = $i % 3 === 0 ? \max(1, \strlen($bytes)) : \max($g->r->getInt(1, 40), \intdiv(\strlen($bytes), 6));
            self::assertSameDecoding($bytes, $optionSets[$i % 4], $sets[$i % 3], 512, $chunk, $ctx);
        }
    }

    public function testTruncatedAndMutatedInputDecodesTheSame(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $packer = new Packer(0, Extensions::tarantool());
        $interesting = "\xc1\xc4\xc5\xc6\xc7\xc8\xc9\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\x01\x02\x03\xff\x81\x91\x00\xc0\xc2\xca\xcf";
        for ($i = 0; $i < 3 * self::VALUES; ++$i) {
            $bytes = $packer->pack($g->value());
            $len = \strlen($bytes);
            switch ($i % 4) {
                case 0:
                    $bytes = \substr($bytes, 0, $g->r->getInt(0, $len));
                    break;
                case 1:
                case 2:
                    for ($k = $g->r->getInt(1, 4); $k > 0 && $len > 0; --$k) {
                        $bytes[$g->r->getInt(0, $len - 1)] = $g->r->getInt(0, 1) === 1
                            ? $interesting[$g->r->getInt(0, \strlen($interesting) - 1)] : \chr($g->r->getInt(0, 255));
                    }
                    break;
                default:
                    $bytes = $g->r->getBytes($g->r->getInt(1, 48));
            }
            $ctx = "seed $seed, input $i: " . \bin2hex(\substr($bytes, 0, 64));
            self::assertSameDecoding($bytes, 0, Extensions::tarantool(), [512, 3, 1][$i % 3], \max(1, \strlen($bytes)), $ctx);
        }
    }

    public function testHostileHeadersAndNestingFailTheSame(): void
    {
        $cases = [
            "\xdd\xff\xff\xff\xff", "\xdf\x80\x00\x00\x00\x01", "\xdb\xff\xff\xff\xff", "\xc9\xff\xff\xff\xff\x01",
            \str_repeat("\x91", 513) . "\x01", \str_repeat("\x81\x01", 600) . "\x01", \str_repeat("\xdc\x00\x01", 520) . "\xc0",
            "\x81\x91\x01\x02", "\x81\xc0\x01", "\x81\xcb" . \pack('E', 1.5) . "\x01", "\x82\x01\x02\x01\x03", "\x82\xa1" . "7" . "\x01\x07\x02",
            "\x81\xd6\xff\x00\x00\x00\x01\x01", "\xd4\x01\x00", "\xd8\x02" . \str_repeat("\0", 15), "\xc7\x00\x03",
            "\xd5\x01\xd0\x01", "\xc7\x03\x01\x00\x12\x3a", "\xd6\x01\x00\x01\x23\x4c", "\xc1", "\x92\x01", "\x01\x02",
        ];
        foreach ($cases as $i => $bytes) {
            foreach ([512, 2] as $depth) {
                self::assertSameDecoding($bytes, 0, Extensions::tarantool(), $depth, \strlen($bytes), "case $i, depth $depth: " . \bin2hex(\substr($bytes, 0, 32)));
                self::assertSameDecoding($bytes, 0, Extensions::tarantool(), $depth, 1, "case $i byte by byte, depth $depth");
            }
        }
    }

    public function testDeepestNativeNestingFitsInAFiber(): void
    {
        // 1024 levels is the deepest limit the C decoder takes; a Fiber has the smallest C stack
        $bytes = \str_repeat("\x91", 1024) . "\x01";
        $fiber = new \Fiber(static function () use ($bytes): string {
            [$n, $p] = self::pair(static fn () => new BufferUnpacker('', 0, null, 1024));
            self::assertSame(self::outcome(static fn () => $p->unpackMessage($bytes)), self::outcome(static fn () => $n->unpackMessage($bytes)));
            self::assertSame(self::outcome(static fn () => $p->unpackMessage("\x91" . $bytes)), self::outcome(static fn () => $n->unpackMessage("\x91" . $bytes)));
            return self::outcome(static fn () => $n->unpackMessage($bytes));
        });
        $fiber->start();
        self::assertStringStartsWith('value ', $fiber->getReturn());
    }
}
