<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Exception\ProtocolException;

/**
 * Cuts reply frames out of a read buffer. Tarantool writes every reply header with one
 * fixed-width layout (83 00 ce <code> 01 cf <sync> 05 ce <schema>), taken on a fast path;
 * any other valid MessagePack header is decoded generically.
 */
final class FrameReader
{
    public const MAX_FRAME = 1 << 30;

    /**
     * The frame starting at $off, advancing $off past it; null if not complete yet.
     * @return array{int, int, int, string}|null [code, sync, schema version, raw body]
     */
    public static function next(string $buf, int &$off, int $len, string $peer): ?array
    {
        if ($len - $off < 5) {
            return null;
        }
        if ($buf[$off] !== "\xce") {
            throw new ProtocolException(\sprintf('Bad frame length marker 0x%02x from %s', \ord($buf[$off]), $peer));
        }
        $size = \unpack('N', $buf, $off + 1)[1];
        $h = $off + 5;
        $end = $h + $size;
        if ($end > $len) {
            if ($size > self::MAX_FRAME) {
                throw new ProtocolException(\sprintf('Frame of %d bytes from %s exceeds the %d byte limit', $size, $peer, self::MAX_FRAME));
            }
            return null;
        }
        $off = $end;
        if ($size >= 23 && $buf[$h] === "\x83" && $buf[$h + 1] === "\x00" && $buf[$h + 2] === "\xce"
            && $buf[$h + 7] === "\x01" && $buf[$h + 8] === "\xcf" && $buf[$h + 17] === "\x05" && $buf[$h + 18] === "\xce") {
            $v = \unpack('Nc/x2/Js/x2/Nv', $buf, $h + 3);
            return [$v['c'], $v['s'], $v['v'], $size > 23 ? \substr($buf, $h + 23, $size - 23) : ''];
        }
        $hdr = self::header($buf, $h, $end);
        if ($hdr === null) {
            throw new ProtocolException('Malformed reply header from ' . $peer . ': ' . \bin2hex(\substr($buf, $h, \min(32, $size))));
        }
        [$code, $sync, $schema, $bodyAt] = $hdr;
        return [$code, $sync, $schema, $bodyAt < $end ? \substr($buf, $bodyAt, $end - $bodyAt) : ''];
    }

    /**
     * Decodes a header map of small unsigned keys to unsigned values in any encoding.
     * @return array{int, int, int, int}|null [code, sync, schema version, body offset]
     */
    public static function header(string $buf, int $at, int $end): ?array
    {
        if ($at >= $end) {
            return null;
        }
        $b = \ord($buf[$at++]);
        if ($b >= 0x80 && $b <= 0x8f) {
            $n = $b & 0x0f;
        } elseif ($b === 0xde && $at + 2 <= $end) {
            $n = \unpack('n', $buf, $at)[1];
            $at += 2;
        } else {
            return null;
        }
        $h = [0 => 0, 1 => 0, 5 => 0];
        for ($i = 0; $i < $n; $i++) {
            $k = self::uint($buf, $at, $end);
            $v = self::uint($buf, $at, $end);
            if ($k === null || $v === null) {
                return null;
            }
            $h[$k] = $v;
        }
        return [$h[0], $h[1], $h[5], $at];
    }

    private static function uint(string $buf, int &$at, int $end): ?int
    {
        if ($at >= $end) {
            return null;
        }
        $b = \ord($buf[$at++]);
        if ($b < 0x80) {
            return $b;
        }
        $w = match ($b) {
            0xcc => 1, 0xcd => 2, 0xce => 4, 0xcf => 8,
            default => 0,
        };
        if ($w === 0 || $at + $w > $end) {
            return null;
        }
        $v = match ($w) {
            1 => \ord($buf[$at]),
            2 => \unpack('n', $buf, $at)[1],
            4 => \unpack('N', $buf, $at)[1],
            8 => \unpack('J', $buf, $at)[1],
        };
        $at += $w;
        return $v;
    }
}
