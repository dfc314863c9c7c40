<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * A Codec that hands work to ext-msgpack (C) only where the result is the same as the pure
 * implementation's, and uses PureCodec otherwise:
 *
 *  - pack: values made only of null, bool, int, float, string and arrays go to msgpack_pack()
 *    (checked by a walk over the arrays); anything holding an object (extensions, Type\*, GMP)
 *    is packed in PHP.
 *  - unpack: messages of at least $minUnpackSize bytes are decoded by ext-msgpack with PHP
 *    object decoding disabled, and the result is accepted only if msgpack_pack() of it gives
 *    back exactly the input bytes. Anything ext-msgpack maps differently (ext values, which it
 *    turns into null; bin; float32; nil/bool/float map keys; duplicate keys; non-minimal
 *    widths) fails that check, and the message is decoded by PureCodec instead, which
 *    returns the canonical value or raises the precise MsgPackException.
 *
 * The nesting limit is fixed at 1024 levels for unpacking because that is ext-msgpack's own
 * limit; the PHP fallback uses the same, so both paths accept the same inputs.
 */
final class ExtMsgpackCodec implements Codec
{
    public const MAX_DEPTH = 1024;

    private readonly PureCodec $pure;
    private readonly \MessagePackUnpacker $ext;
    private readonly bool $extPack;

    /**
     * @param int $minUnpackSize below this size the pure unpacker is as fast (see bench/msgpack)
     */
    public function __construct(?Extensions $extensions = null, private readonly int $minUnpackSize = 1024)
    {
        if (!\extension_loaded('msgpack')) {
            throw new \LogicException('ExtMsgpackCodec needs ext-msgpack');
        }
        $this->pure = new PureCodec(0, $extensions, self::MAX_DEPTH);
        // false = never turn maps into PHP objects (ext-msgpack's php_only mode would).
        $this->ext = new \MessagePackUnpacker(false);
        // Without str8, ext-msgpack writes 32..255-byte strings as str16: not the same bytes.
        $this->extPack = (bool) \ini_get('msgpack.use_str8_serialization');
    }

    public function pack(mixed $value): string
    {
        if ($this->extPack && (\is_array($value) ? self::plain($value, 0) : !\is_object($value) && !\is_resource($value))) {
            return \msgpack_pack($value);
        }
        return $this->pure->pack($value);
    }

    public function unpack(string $data): mixed
    {
        if (!$this->extPack || \strlen($data) < $this->minUnpackSize) {
            return $this->pure->unpack($data);
        }
        $u = $this->ext;
        $u->reset();
        $offset = 0;
        if (@$u->execute($data, $offset) && $offset === \strlen($data)) {
            $v = $u->data();
            $u->reset();
            if (\msgpack_pack($v) === $data) {
                return $v;
            }
        }
        $u->reset();
        return $this->pure->unpack($data);
    }

    /** @param array<mixed> $a */
    private static function plain(array $a, int $depth): bool
    {
        // The Packer refuses level 513; so must we, or ext-msgpack would pack what PHP rejects.
        if ($depth >= 512) {
            return false;
        }
        foreach ($a as $v) {
            if (\is_array($v)) {
                if (!self::plain($v, $depth + 1)) {
                    return false;
                }
            } elseif (\is_object($v) || \is_resource($v)) {
                return false;
            }
        }
        return true;
    }
}
