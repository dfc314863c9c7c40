<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;

/**
 * Ext -1 in its three layouts: 4 bytes (uint32 seconds), 8 bytes (30-bit nanoseconds over
 * 34-bit seconds) and 12 bytes (uint32 nanoseconds, int64 seconds). Packs the smallest.
 */
final class TimestampExtension implements Extension
{
    public function getType(): int
    {
        return -1;
    }

    public function getClass(): ?string
    {
        return Timestamp::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof Timestamp);
        $s = $value->seconds;
        $ns = $value->nanoseconds;
        if ($s >= 0 && $s < 0x400000000) {
            if ($ns === 0 && $s <= 0xffffffff) {
                return \pack('N', $s);
            }
            // Shifting into the sign bit wraps, which is exactly the 64-bit layout.
            return \pack('J', ($ns << 34) | $s);
        }
        return \pack('NJ', $ns, $s);
    }

    public function unpack(BufferUnpacker $unpacker, int $length): Timestamp
    {
        switch ($length) {
            case 4:
                return new Timestamp(\unpack('N', $unpacker->readBytes(4))[1]);
            case 8:
                $v = \unpack('J', $unpacker->readBytes(8))[1];
                $ns = ($v >> 34) & 0x3fffffff;
                if ($ns > 999_999_999) {
                    throw $unpacker->fail("timestamp64 nanoseconds $ns out of range");
                }
                return new Timestamp($v & 0x3ffffffff, $ns);
            case 12:
                $u = \unpack('Nns/Js', $unpacker->readBytes(12));
                [$ns, $s] = [$u['ns'], $u['s']];
                if ($ns > 999_999_999) {
                    throw $unpacker->fail("timestamp96 nanoseconds $ns out of range");
                }
                return new Timestamp($s, $ns);
        }
        throw $unpacker->fail("timestamp payload of $length bytes (expected 4, 8 or 12)");
    }
}
