<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;

/**
 * Tarantool MP_DECIMAL (ext 1): a MessagePack int scale (may be negative) followed by packed
 * BCD: two digits per byte, most significant first, a leading 0 nibble when needed, and the
 * sign in the last nibble (0xd/0xb negative; 0xa/0xc/0xe/0xf positive). Packs 0xc / 0xd.
 */
final class DecimalExtension implements Extension
{
    public function getType(): int
    {
        return 1;
    }

    public function getClass(): ?string
    {
        return Decimal::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof Decimal);
        $nibbles = $value->digits . ($value->negative ? 'd' : 'c');
        if (\strlen($nibbles) % 2 === 1) {
            $nibbles = '0' . $nibbles;
        }
        return $packer->packInt($value->scale) . \hex2bin($nibbles);
    }

    public function unpack(BufferUnpacker $unpacker, int $length): Decimal
    {
        $start = $unpacker->position();
        $scale = $unpacker->unpackInt();
        $n = $length - ($unpacker->position() - $start);
        if ($n < 1) {
            throw $unpacker->fail('decimal has no BCD digits');
        }
        $hex = \bin2hex($unpacker->readBytes($n));
        $sign = $hex[-1];
        $digits = \substr($hex, 0, -1);
        if ($sign === 'b' || $sign === 'd') {
            $negative = true;
        } elseif ($sign === 'a' || $sign === 'c' || $sign === 'e' || $sign === 'f') {
            $negative = false;
        } else {
            throw $unpacker->fail("decimal sign nibble 0x$sign is invalid");
        }
        if ($digits === '') {
            $digits = '0';
        }
        if (\strspn($digits, '0123456789') !== \strlen($digits)) {
            throw $unpacker->fail('decimal BCD contains a non-digit nibble');
        }
        try {
            return Decimal::of($digits, $scale, $negative);
        } catch (\InvalidArgumentException $e) {
            throw $unpacker->fail($e->getMessage());
        }
    }
}
