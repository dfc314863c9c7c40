<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Tests\Support\RandomValues;
use PHPUnit\Framework\TestCase;

/**
 * Property tests on seeded random values. The seed is random per run and printed on failure;
 * rerun with MSGPACK_SEED=<seed> to reproduce.
 */
final class RoundTripTest extends TestCase
{
    private const VALUES = 1500;

    /** serialize() tells NaN, -0.0 and int/float apart, unlike == and ===. */
    private static function same(mixed $a, mixed $b): bool
    {
        return serialize($a) === serialize($b);
    }

    public function testPackThenUnpackGivesTheValueBack(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $exts = Extensions::tarantool();
        $p = new Packer(0, $exts);
        $u = new BufferUnpacker('', 0, $exts);
        $stream = '';
        $values = [];
        for ($i = 0; $i < self::VALUES; ++$i) {
            $v = $g->value();
            $bytes = $p->pack($v);
            $u->reset($bytes);
            $back = $u->unpack();
            self::assertTrue(self::same($v, $back), "seed=$seed value #$i: " . bin2hex(substr($bytes, 0, 64)));
            self::assertFalse($u->hasRemaining(), "seed=$seed value #$i: trailing bytes");
            self::assertSame($bytes, $p->pack($back), "seed=$seed value #$i: re-pack differs");
            if ($i < 300) {
                $stream .= $bytes;
                $values[] = $v;
            }
        }
        // The same values as one stream cut into random chunks.
        $s = new BufferUnpacker('', 0, $exts);
        $got = [];
        for ($o = 0; $o < \strlen($stream);) {
            $n = $g->r->getInt(1, 700);
            $s->append(substr($stream, $o, $n));
            $o += $n;
            array_push($got, ...$s->tryUnpack());
        }
        self::assertFalse($s->hasRemaining(), "seed=$seed");
        self::assertTrue(self::same($values, $got), "seed=$seed: streamed values differ");
    }

    public function testEveryValidWidthDecodes(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $u = new BufferUnpacker();
        for ($i = 0; $i < self::VALUES; ++$i) {
            $v = $g->value(0, false);
            $bytes = $g->encode($v);
            $u->reset($bytes);
            self::assertTrue(self::same($v, $u->unpack()), "seed=$seed value #$i: " . bin2hex(substr($bytes, 0, 64)));
            self::assertFalse($u->hasRemaining());
        }
    }

    public function testAgreesWithExtMsgpack(): void
    {
        if (!\extension_loaded('msgpack')) {
            self::markTestSkipped('ext-msgpack not loaded');
        }
        $g = new RandomValues($seed = RandomValues::seed());
        $p = new Packer();
        $u = new BufferUnpacker();
        $ext = new \MessagePackUnpacker(false);
        for ($i = 0; $i < self::VALUES; ++$i) {
            $v = $g->value(0, false);
            $ours = $p->pack($v);
            self::assertSame(bin2hex(msgpack_pack($v)), bin2hex($ours), "seed=$seed value #$i: packers differ");
            // Decode random-width encodings with both decoders.
            $bytes = $g->encode($v);
            $ext->reset();
            $off = 0;
            self::assertTrue($ext->execute($bytes, $off), "seed=$seed value #$i: ext-msgpack failed");
            $u->reset($bytes);
            self::assertTrue(self::same($ext->data(), $u->unpack()), "seed=$seed value #$i: decoders differ on " . bin2hex(substr($bytes, 0, 64)));
        }
    }
}
