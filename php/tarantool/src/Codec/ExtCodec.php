<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Codec;

use Ferry\Tarantool\Exception\ProtocolException;

/**
 * ext-msgpack (PECL). Faster, but knows none of Tarantool's extension types: decimal/uuid
 * arguments cannot be sent and such results come back as MessagePack ext placeholders.
 *
 * The process-wide msgpack.php_only setting is left alone: other code may rely on it. The
 * codec's own packer and unpacker run with PHP-specific serialization off (it would produce
 * bytes Tarantool cannot read, and instantiate classes named in replies).
 */
final class ExtCodec implements Codec
{
    private readonly \MessagePack $packer;
    private readonly \MessagePackUnpacker $unpacker;

    public function __construct()
    {
        if (!\class_exists(\MessagePack::class, false)) {
            throw new \LogicException('ExtCodec needs the msgpack PHP extension (ext-msgpack)');
        }
        $this->packer = new \MessagePack(false);
        $this->unpacker = new \MessagePackUnpacker(false);
    }

    public function pack(mixed $value): string
    {
        if (\is_object($value)) {
            throw new \InvalidArgumentException('ExtCodec cannot pack objects (' . \get_class($value) . '); use PureCodec');
        }
        return $this->packer->pack($value);
    }

    /** Exactly one value: a message with bytes after it is malformed, not truncated to its start. */
    public function unpack(string $data): mixed
    {
        $u = $this->unpacker;
        $u->reset();
        $offset = 0;
        $complete = $u->execute($data, $offset);
        if ($complete && $offset === \strlen($data)) {
            $value = $u->data();
            if ($offset > 65536) {
                $u->reset(); // do not keep a large reply alive until the next one
            }
            return $value;
        }
        throw new ProtocolException($complete
            ? \sprintf('Malformed MessagePack in response: %d trailing bytes after the value', \strlen($data) - $offset)
            : 'Malformed MessagePack in response (ext-msgpack could not decode it)');
    }
}
