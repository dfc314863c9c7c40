<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;

/**
 * Tarantool MP_DATETIME (ext 4), as Tarantool's box protocol documentation describes it: the
 * seconds as an int64, then, only when one of them is not zero, nsec (int32), tzoffset
 * (int16) and tzindex (int16); all little-endian, so the payload is 8 or 16 bytes (fixext 8
 * or 16). Decoding applies the range checks Tarantool applies to what it receives.
 */
final class DatetimeExtension implements Extension
{
    public function getType(): int
    {
        return 4;
    }

    public function getClass(): ?string
    {
        return Datetime::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof Datetime);
        $s = \pack('P', $value->seconds);
        if ($value->nanoseconds === 0 && $value->tzoffset === 0 && $value->tzindex === 0) {
            return $s;
        }
        return $s . \pack('Vvv', $value->nanoseconds, $value->tzoffset & 0xffff, $value->tzindex);
    }

    public function unpack(BufferUnpacker $unpacker, int $length): Datetime
    {
        if ($length !== 8 && $length !== 16) {
            throw $unpacker->fail("datetime payload is $length bytes, expected 8 or 16");
        }
        // 'P' is unsigned in name only: a PHP int is 64-bit signed, which is the field's type.
        $u = \unpack($length === 8 ? 'Ps' : 'Ps/Vns/vtzo/vtzi', $unpacker->readBytes($length));
        $ns = $u['ns'] ?? 0;
        $tzo = $u['tzo'] ?? 0;
        $tzi = $u['tzi'] ?? 0;
        // the small fields are signed on the wire
        $ns = $ns >= 0x80000000 ? $ns - 0x100000000 : $ns;
        $tzo = $tzo >= 0x8000 ? $tzo - 0x10000 : $tzo;
        $tzi = $tzi >= 0x8000 ? $tzi - 0x10000 : $tzi;
        $problem = Datetime::check($u['s'], $ns, $tzo, $tzi);
        if ($problem !== null) {
            throw $unpacker->fail($problem);
        }
        return new Datetime($u['s'], $ns, $tzo, $tzi);
    }
}
