<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests\Support;

use Ferry\MsgPack\Ext\BoxError;
use Ferry\MsgPack\Ext\Datetime;
use Ferry\MsgPack\Ext\Decimal;
use Ferry\MsgPack\Ext\ErrorStack;
use Ferry\MsgPack\Ext\Interval;
use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Ext\Timestamp;
use Ferry\MsgPack\Ext\Uuid;
use Random\Engine\Mt19937;
use Random\Randomizer;

/**
 * Seeded generator of PHP values and of valid MessagePack encodings of them that use
 * random (not necessarily minimal) widths.
 */
final class RandomValues
{
    public readonly Randomizer $r;

    public function __construct(public readonly int $seed)
    {
        $this->r = new Randomizer(new Mt19937($seed));
    }

    public static function seed(): int
    {
        $env = getenv('MSGPACK_SEED');
        return $env !== false && $env !== '' ? (int) $env : random_int(1, PHP_INT_MAX);
    }

    /** @param bool $objects include extension values (Timestamp, Decimal, Uuid, RawExt, ErrorStack, Datetime, Interval) */
    public function value(int $depth = 0, bool $objects = true): mixed
    {
        $pick = $this->r->getInt(0, $depth > 4 ? 9 : 12);
        return match ($pick) {
            0 => null,
            1 => $this->r->getInt(0, 1) === 1,
            2, 3 => $this->int(),
            4 => $this->float(),
            5, 6 => $this->string(),
            7, 8 => $objects ? $this->object() : $this->int(),
            9 => $this->r->getInt(-32, 127),
            10, 11 => $this->list($depth, $objects),
            default => $this->map($depth, $objects),
        };
    }

    public function int(): int
    {
        $bounds = [0x7f, 0xff, 0xffff, 0xffffffff, PHP_INT_MAX];
        $b = $bounds[$this->r->getInt(0, 4)];
        $v = $this->r->getInt(0, 3) === 0 ? $b : $this->r->getInt(0, $b);
        if ($this->r->getInt(0, 1) === 1) {
            $v = $v === PHP_INT_MAX && $this->r->getInt(0, 1) === 1 ? PHP_INT_MIN : -$v;
        }
        return $v;
    }

    public function float(): float
    {
        if ($this->r->getInt(0, 3) === 0) {
            return [0.0, -0.0, 1.5, INF, -INF, NAN, PHP_FLOAT_EPSILON, PHP_FLOAT_MAX][$this->r->getInt(0, 7)];
        }
        return unpack('E', $this->r->getBytes(8))[1];
    }

    public function string(): string
    {
        $len = match ($this->r->getInt(0, 20)) {
            0 => $this->r->getInt(256, 70000),
            1, 2 => $this->r->getInt(32, 255),
            default => $this->r->getInt(0, 31),
        };
        if ($len === 0) {
            return '';
        }
        return $this->r->getInt(0, 1) === 1 ? $this->r->getBytes($len) : str_repeat('a', $len);
    }

    public function object(): object
    {
        switch ($this->r->getInt(0, 7)) {
            case 0:
                $sec = [$this->r->getInt(0, 0xffffffff), $this->r->getInt(0, (1 << 34) - 1), $this->r->getInt(PHP_INT_MIN, PHP_INT_MAX)];
                return new Timestamp($sec[$this->r->getInt(0, 2)], $this->r->getInt(0, 1) === 1 ? 0 : $this->r->getInt(0, 999999999));
            case 1:
                $digits = (string) $this->r->getInt(0, PHP_INT_MAX) . (string) $this->r->getInt(0, PHP_INT_MAX);
                return Decimal::of(substr($digits, 0, $this->r->getInt(1, 38)), $this->r->getInt(-40, 40), $this->r->getInt(0, 1) === 1);
            case 2:
                return Uuid::fromBytes($this->r->getBytes(16));
            case 4:
                return $this->datetime();
            case 5:
                return $this->interval();
            case 3:
                return new ErrorStack(new BoxError('ClientError', $this->string(), $this->r->getInt(0, 300), 'f.c', 7, 0, ['k' => $this->int()]));
            default:
                $type = $this->r->getInt(-128, 127);
                if (\in_array($type, [-1, 1, 2, 3, 4, 6], true)) {
                    $type = 100;
                }
                $len = [0, 1, 2, 3, 4, 8, 16, 17, 300][$this->r->getInt(0, 8)];
                return new RawExt($type, $len === 0 ? '' : $this->r->getBytes($len));
        }
    }

    /** Any datetime Tarantool accepts, bounds included now and then. */
    public function datetime(): Datetime
    {
        $pick = fn (int $lo, int $hi, int $typical): int => match ($this->r->getInt(0, 5)) {
            0 => $lo, 1 => $hi, 2 => 0, 3 => $typical, default => $this->r->getInt($lo, $hi),
        };
        $plain = $this->r->getInt(0, 2) === 0; // the 8-byte form
        return new Datetime(
            $pick(Datetime::MIN_SECONDS, Datetime::MAX_SECONDS, $this->r->getInt(0, 2_000_000_000)),
            $plain ? 0 : $pick(0, Datetime::MAX_NANOSECONDS, $this->r->getInt(0, 999_999_999)),
            $plain ? 0 : $pick(Datetime::MIN_TZOFFSET, Datetime::MAX_TZOFFSET, 180),
            $plain ? 0 : $pick(0, Datetime::MAX_TZINDEX, 0),
        );
    }

    /** Any interval the wire format holds: each field absent, small, typical or at a bound. */
    public function interval(): Interval
    {
        $f = function (int $lo, int $hi): int {
            return match ($this->r->getInt(0, 6)) {
                0, 1 => 0, 2 => $lo, 3 => $hi, 4 => $this->r->getInt(-100, 100), default => $this->r->getInt($lo, $hi),
            };
        };
        $i32 = static fn () => $f(-0x80000000, 0x7fffffff);
        $i64 = static fn () => $f(PHP_INT_MIN, PHP_INT_MAX);
        return new Interval($i32(), $i32(), $i32(), $i64(), $i64(), $i64(), $i64(), $i32(), $this->r->getInt(0, 2));
    }

    /** @return list<mixed> */
    public function list(int $depth, bool $objects = true): array
    {
        $n = $this->r->getInt(0, 10) === 0 ? $this->r->getInt(16, 40) : $this->r->getInt(0, 6);
        $a = [];
        for ($i = 0; $i < $n; ++$i) {
            $a[] = $this->value($depth + 1, $objects);
        }
        return $a;
    }

    /** @return array<int|string, mixed> */
    public function map(int $depth, bool $objects = true): array
    {
        $n = $this->r->getInt(0, 10) === 0 ? $this->r->getInt(16, 40) : $this->r->getInt(1, 6);
        $m = [];
        for ($i = 0; $i < $n; ++$i) {
            $k = $this->r->getInt(0, 1) === 1 ? $this->int() : $this->string();
            $m[$k] = $this->value($depth + 1, $objects);
        }
        return $m;
    }

    /**
     * A valid encoding of a plain value (null/bool/int/float/string/array) with a random choice
     * among the widths that can hold it. Floats always use float64 (exact).
     */
    public function encode(mixed $v): string
    {
        if ($v === null) {
            return "\xc0";
        }
        if (\is_bool($v)) {
            return $v ? "\xc3" : "\xc2";
        }
        if (\is_float($v)) {
            return "\xcb" . pack('E', $v);
        }
        if (\is_int($v)) {
            $opts = [];
            if ($v >= 0 && $v <= 0x7f) {
                $opts[] = \chr($v);
            }
            if ($v >= -32 && $v < 0) {
                $opts[] = \chr($v & 0xff);
            }
            if ($v >= 0) {
                $opts[] = "\xcf" . pack('J', $v);
                if ($v <= 0xffffffff) {
                    $opts[] = "\xce" . pack('N', $v);
                }
                if ($v <= 0xffff) {
                    $opts[] = "\xcd" . pack('n', $v);
                }
                if ($v <= 0xff) {
                    $opts[] = "\xcc" . \chr($v);
                }
            }
            $opts[] = "\xd3" . pack('J', $v);
            if ($v >= -0x80000000 && $v <= 0x7fffffff) {
                $opts[] = "\xd2" . pack('N', $v & 0xffffffff);
            }
            if ($v >= -0x8000 && $v <= 0x7fff) {
                $opts[] = "\xd1" . pack('n', $v & 0xffff);
            }
            if ($v >= -0x80 && $v <= 0x7f) {
                $opts[] = "\xd0" . \chr($v & 0xff);
            }
            return $opts[$this->r->getInt(0, \count($opts) - 1)];
        }
        if (\is_string($v)) {
            $n = \strlen($v);
            $bin = $this->r->getInt(0, 1) === 1;
            $w = $this->width($n, $bin ? 0 : 5, true);
            return match ($w) {
                5 => \chr(0xa0 | $n),
                8 => ($bin ? "\xc4" : "\xd9") . \chr($n),
                16 => ($bin ? "\xc5" : "\xda") . pack('n', $n),
                default => ($bin ? "\xc6" : "\xdb") . pack('N', $n),
            } . $v;
        }
        \assert(\is_array($v));
        $n = \count($v);
        $isList = array_is_list($v);
        $w = $this->width($n, 4, false);
        $out = match ($w) {
            4 => \chr(($isList ? 0x90 : 0x80) | $n),
            16 => ($isList ? "\xdc" : "\xde") . pack('n', $n),
            default => ($isList ? "\xdd" : "\xdf") . pack('N', $n),
        };
        foreach ($v as $k => $item) {
            if (!$isList) {
                $out .= $this->encode($k);
            }
            $out .= $this->encode($item);
        }
        return $out;
    }

    /** A random header width in bits able to hold $n; $fix = bits of the fix format (0: none). */
    private function width(int $n, int $fix, bool $has8): int
    {
        $opts = [32];
        if ($n <= 0xffff) {
            $opts[] = 16;
        }
        if ($has8 && $n <= 0xff) {
            $opts[] = 8;
        }
        if ($fix > 0 && $n < (1 << $fix)) {
            $opts[] = $fix;
        }
        return $opts[$this->r->getInt(0, \count($opts) - 1)];
    }
}
