<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\InsufficientData;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Tests\Support\RandomValues;
use PHPUnit\Framework\TestCase;

/**
 * Random and mutated input must either decode or raise MsgPackException - never another
 * exception, warning, hang or large allocation. Seeded; rerun with MSGPACK_SEED=<seed>.
 */
final class FuzzTest extends TestCase
{
    private const INPUTS = 15000;

    /** Decodes everything in $bytes; returns the number of values, fails on a foreign throwable. */
    private function drain(string $bytes, string $context): int
    {
        $u = new BufferUnpacker($bytes, 0, Extensions::tarantool(), 64);
        $n = 0;
        $before = memory_get_usage();
        try {
            while ($u->hasRemaining()) {
                $start = $u->position();
                try {
                    $u->unpack();
                    ++$n;
                    self::assertGreaterThan($start, $u->position(), $context);
                } catch (InsufficientData $e) {
                    self::assertSame($start, $u->position(), "$context: not rewound");
                    self::assertGreaterThanOrEqual(1, $u->missing(), $context);
                    break;
                }
            }
        } catch (MsgPackException $e) {
            self::assertGreaterThanOrEqual(0, $e->getOffset(), $context);
            self::assertLessThanOrEqual(\strlen($bytes), $e->getOffset(), $context);
            self::assertStringStartsWith('MessagePack error at offset ', $e->getMessage());
        } catch (\Throwable $e) {
            self::fail("$context: " . \get_class($e) . ': ' . $e->getMessage());
        }
        // Decoded values may be larger than the input, but never by orders of magnitude.
        self::assertLessThan(64 * \strlen($bytes) + (1 << 20), memory_get_usage() - $before, $context);
        return $n;
    }

    public function testRandomBytes(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        // Bias towards type bytes that carry lengths and ext codes, so those paths get hit.
        $interesting = "\xc1\xc4\xc5\xc6\xc7\xc8\xc9\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\x01\x02\x03\xff\x81\x91\x00";
        $decoded = 0;
        for ($i = 0; $i < self::INPUTS; ++$i) {
            $len = $g->r->getInt(1, 40);
            $bytes = '';
            for ($j = 0; $j < $len; ++$j) {
                $bytes .= $g->r->getInt(0, 2) === 0
                    ? $interesting[$g->r->getInt(0, \strlen($interesting) - 1)]
                    : $g->r->getBytes(1);
            }
            $decoded += $this->drain($bytes, "seed=$seed input #$i " . bin2hex($bytes));
        }
        self::assertGreaterThan(0, $decoded, 'the generator never produced a decodable value');
    }

    public function testMutatedMessages(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $p = new Packer(0, Extensions::tarantool());
        $special = ["\xc1", "\xdd", "\xdf", "\xdb", "\xc9", "\xff", "\x00", "\x7f", "\xd8", "\xd4", "\x9f", "\x8f"];
        for ($i = 0; $i < self::INPUTS; ++$i) {
            $bytes = $p->pack($g->value());
            if (\strlen($bytes) > 2000) {
                $bytes = substr($bytes, 0, 2000);
            }
            $mutations = $g->r->getInt(1, 3);
            for ($m = 0; $m < $mutations && $bytes !== ''; ++$m) {
                $at = $g->r->getInt(0, max(0, \strlen($bytes) - 1));
                switch ($g->r->getInt(0, 4)) {
                    case 0:
                        $bytes[$at] = \chr(\ord($bytes[$at]) ^ (1 << $g->r->getInt(0, 7)));
                        break;
                    case 1:
                        $bytes[$at] = $special[$g->r->getInt(0, \count($special) - 1)];
                        break;
                    case 2:
                        $bytes = substr($bytes, 0, $at);
                        break;
                    case 3:
                        $bytes = substr($bytes, 0, $at) . $g->r->getBytes($g->r->getInt(1, 4)) . substr($bytes, $at);
                        break;
                    default:
                        $bytes = substr($bytes, 0, $at) . substr($bytes, $at + $g->r->getInt(1, 4));
                }
            }
            $this->drain($bytes, "seed=$seed input #$i " . bin2hex(substr($bytes, 0, 80)));
        }
    }

    public function testHostileNestingAndCountsAreCheap(): void
    {
        // 1 MB of array headers: rejected at the depth limit, not after a million frames.
        $this->drain(str_repeat("\x91", 1 << 20), 'deep arrays');
        $this->drain(str_repeat("\x81\x01", 1 << 19), 'deep maps');
        // Containers claiming far more elements than there are bytes.
        $this->drain(str_repeat("\xdd\x7f\xff\xff\xff", 1000), 'huge counts');
        // A large but honest array of nils decodes.
        self::assertSame(1, $this->drain("\xdd\x00\x10\x00\x00" . str_repeat("\xc0", 1 << 20), 'many nils'));
    }
}
