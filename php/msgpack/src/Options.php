<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * Bit flags for Packer and BufferUnpacker. Flags marked "default" describe the behaviour
 * you get with 0; passing them explicitly is allowed and changes nothing. Contradictory
 * flags (e.g. FORCE_ARR | FORCE_MAP) raise \InvalidArgumentException.
 */
final class Options
{
    // Packer: how PHP strings are encoded.
    /** default: every PHP string becomes a MessagePack str (what Tarantool and ext-msgpack expect). */
    public const FORCE_STR = 0x0001;
    /** every PHP string becomes bin. */
    public const FORCE_BIN = 0x0002;
    /** valid UTF-8 becomes str, anything else bin (costs one UTF-8 check per string). */
    public const DETECT_STR_BIN = 0x0004;

    // Packer: how PHP arrays are encoded.
    /** default: lists (keys 0..n-1 in order) become arrays, anything else maps. */
    public const DETECT_ARR_MAP = 0x0008;
    /** every PHP array becomes an array; keys are dropped. */
    public const FORCE_ARR = 0x0010;
    /** every PHP array becomes a map, lists included. */
    public const FORCE_MAP = 0x0020;

    // Packer: floats.
    /** default: floats are packed as float64 (lossless). */
    public const FORCE_FLOAT64 = 0x0040;
    /** floats are packed as float32 (lossy, smaller). */
    public const FORCE_FLOAT32 = 0x0080;

    // Unpacker: uint64 values above PHP_INT_MAX.
    /** default: decimal string, e.g. "18446744073709551615" (same as ext-msgpack). */
    public const BIGINT_AS_STR = 0x0100;
    /** \GMP object (needs ext-gmp); the Packer packs GMP back to uint64/int64. */
    public const BIGINT_AS_GMP = 0x0200;
    /** float (lossy). */
    public const BIGINT_AS_FLOAT = 0x0400;

    // Unpacker: bin values.
    /** bin values decode to Type\Bin instead of a plain string, so they re-pack as bin. */
    public const BIN_AS_OBJECT = 0x0800;

    /** @internal */
    public static function exclusive(int $options, int ...$flags): void
    {
        $set = 0;
        foreach ($flags as $f) {
            if ($options & $f) {
                ++$set;
            }
        }
        if ($set > 1) {
            throw new \InvalidArgumentException(sprintf('Contradictory MessagePack options 0x%04x', $options));
        }
    }
}
