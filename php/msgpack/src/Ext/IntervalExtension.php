<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;

/**
 * Tarantool MP_INTERVAL (ext 6), per Tarantool's box protocol documentation: a count byte,
 * then that many (field id byte, MessagePack int value) pairs, ids 0 year, 1 month, 2 week,
 * 3 day, 4 hour, 5 minute, 6 second, 7 nanosecond, 8 adjust. Zero fields are left out when
 * packing (adjust 0 too), in id order, as Tarantool writes them.
 *
 * Decoding is as strict as Tarantool's reader (unknown ids, values of another type or out of
 * the field's range, trailing bytes) and stricter in one point: a field given twice is
 * rejected, where Tarantool would keep the last one (it never writes such a payload).
 */
final class IntervalExtension implements Extension
{
    private const FIELDS = ['year', 'month', 'week', 'day', 'hour', 'minute', 'second', 'nanosecond', 'adjust'];
    /** ids of the int32 fields; the others are int64, adjust 0..2 */
    private const INT32 = [0 => true, 1 => true, 2 => true, 7 => true];

    public function getType(): int
    {
        return 6;
    }

    public function getClass(): ?string
    {
        return Interval::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof Interval);
        $out = '';
        $n = 0;
        foreach ([$value->year, $value->month, $value->week, $value->day, $value->hour, $value->minute,
            $value->second, $value->nanosecond, $value->adjust] as $id => $v) {
            if ($v !== 0) {
                $out .= \chr($id) . $packer->packInt($v);
                ++$n;
            }
        }
        return \chr($n) . $out;
    }

    public function unpack(BufferUnpacker $unpacker, int $length): Interval
    {
        $count = \ord($unpacker->readBytes(1));
        $f = [];
        for ($k = 0; $k < $count; ++$k) {
            $id = \ord($unpacker->readBytes(1));
            if ($id > 8) {
                throw $unpacker->fail("interval field id $id is unknown (0..8)");
            }
            if (isset($f[$id])) {
                throw $unpacker->fail('interval field ' . self::FIELDS[$id] . ' appears twice');
            }
            $v = $unpacker->unpackInt();
            if (isset(self::INT32[$id]) ? ($v < -0x80000000 || $v > 0x7fffffff) : ($id === 8 && ($v < 0 || $v > 2))) {
                throw $unpacker->fail('interval ' . self::FIELDS[$id] . " $v is out of range");
            }
            $f[$id] = $v;
        }
        return new Interval($f[0] ?? 0, $f[1] ?? 0, $f[2] ?? 0, $f[3] ?? 0, $f[4] ?? 0, $f[5] ?? 0, $f[6] ?? 0, $f[7] ?? 0, $f[8] ?? 0);
    }
}
