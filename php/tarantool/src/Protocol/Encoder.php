<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

use Ferry\Tarantool\Codec\Codec;

/**
 * Builds request frames. Header, map headers, keys and non-negative integers are written
 * here directly (every IPROTO key is a positive fixint); only user values reach the codec.
 */
final class Encoder
{
    /** Single-byte strings for 0..127: a table lookup is cheaper than chr() per field. */
    private const FIXINT = [
        "\x00", "\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08", "\x09", "\x0a", "\x0b", "\x0c", "\x0d", "\x0e", "\x0f",
        "\x10", "\x11", "\x12", "\x13", "\x14", "\x15", "\x16", "\x17", "\x18", "\x19", "\x1a", "\x1b", "\x1c", "\x1d", "\x1e", "\x1f",
        "\x20", "\x21", "\x22", "\x23", "\x24", "\x25", "\x26", "\x27", "\x28", "\x29", "\x2a", "\x2b", "\x2c", "\x2d", "\x2e", "\x2f",
        "\x30", "\x31", "\x32", "\x33", "\x34", "\x35", "\x36", "\x37", "\x38", "\x39", "\x3a", "\x3b", "\x3c", "\x3d", "\x3e", "\x3f",
        "\x40", "\x41", "\x42", "\x43", "\x44", "\x45", "\x46", "\x47", "\x48", "\x49", "\x4a", "\x4b", "\x4c", "\x4d", "\x4e", "\x4f",
        "\x50", "\x51", "\x52", "\x53", "\x54", "\x55", "\x56", "\x57", "\x58", "\x59", "\x5a", "\x5b", "\x5c", "\x5d", "\x5e", "\x5f",
        "\x60", "\x61", "\x62", "\x63", "\x64", "\x65", "\x66", "\x67", "\x68", "\x69", "\x6a", "\x6b", "\x6c", "\x6d", "\x6e", "\x6f",
        "\x70", "\x71", "\x72", "\x73", "\x74", "\x75", "\x76", "\x77", "\x78", "\x79", "\x7a", "\x7b", "\x7c", "\x7d", "\x7e", "\x7f",
    ];
    private const KEY = self::FIXINT;

    public function __construct(private readonly Codec $codec)
    {
    }

    /** @param array<int, mixed> $body keys are IPROTO body keys, ids already resolved */
    public function frame(int $type, int $sync, int $schemaVersion, array $body): string
    {
        if ($type === Iproto::SELECT && $schemaVersion === 0 && \count($body) === 6 && \is_int($body[Iproto::SPACE_ID]) && \is_int($body[Iproto::INDEX_ID])) {
            return $this->selectFrame($sync, $body[Iproto::SPACE_ID], $body[Iproto::INDEX_ID], $body[Iproto::LIMIT], $body[Iproto::OFFSET], $body[Iproto::ITERATOR], $body[Iproto::KEY]);
        }
        $p = $schemaVersion > 0
            ? "\x83\x00" . \chr($type) . "\x01" . self::uint($sync) . "\x05" . self::uint($schemaVersion) . \chr(0x80 | \count($body))
            : "\x82\x00" . \chr($type) . "\x01" . self::uint($sync) . \chr(0x80 | \count($body));
        foreach ($body as $k => $v) {
            if (\is_int($v) && $v >= 0) {
                $p .= self::KEY[$k] . ($v < 0x80 ? self::FIXINT[$v] : self::uint($v));
            } elseif (\is_array($v) && \count($v) === 1 && \is_int($v[0] ?? null) && $v[0] >= 0 && $v[0] < 0x80) {
                // The one-part integer key of most lookups, without a trip through the codec.
                $p .= self::KEY[$k] . "\x91" . self::FIXINT[$v[0]];
            } else {
                $p .= self::KEY[$k] . $this->codec->pack($v);
            }
        }
        return "\xce" . \pack('N', \strlen($p)) . $p;
    }

    /**
     * SELECT by id, the hottest request, written in one expression (it is most of the
     * connector's CPU cost per request in synchronous use).
     * @param list<mixed> $key
     */
    public function selectFrame(int $sync, int $space, int $index, int $limit, int $offset, int $iterator, array $key): string
    {
        $k0 = $key[0] ?? null;
        $p = "\x82\x00\x01\x01" . ($sync < 0x80 ? self::FIXINT[$sync] : self::uint($sync))
            . "\x86\x10" . ($space < 0x80 ? self::FIXINT[$space] : self::uint($space))
            . "\x11" . ($index < 0x80 ? self::FIXINT[$index] : self::uint($index))
            . "\x12" . ($limit === 0xFFFFFFFF ? "\xce\xff\xff\xff\xff" : self::uint($limit))
            . "\x13" . ($offset < 0x80 ? self::FIXINT[$offset] : self::uint($offset))
            . "\x14" . self::FIXINT[$iterator]
            . "\x20" . (\is_int($k0) && $k0 >= 0 && \count($key) === 1 ? "\x91" . ($k0 < 0x80 ? self::FIXINT[$k0] : self::uint($k0)) : $this->codec->pack($key));
        return "\xce" . \pack('N', \strlen($p)) . $p;
    }

    public static function uint(int $v): string
    {
        if ($v < 0x80) {
            return \chr($v);
        }
        if ($v < 0x100) {
            return "\xcc" . \chr($v);
        }
        if ($v < 0x10000) {
            return "\xcd" . \pack('n', $v);
        }
        if ($v < 0x100000000) {
            return "\xce" . \pack('N', $v);
        }
        return "\xcf" . \pack('J', $v);
    }
}
