<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Codec;

use Ferry\Tarantool\Exception\ProtocolException;

/**
 * ext-msgpack (PECL). Faster, but knows none of Tarantool's extension types: decimal/uuid
 * arguments cannot be sent and such results come back as MessagePack ext placeholders.
 */
final class ExtCodec implements Codec
{
    public function __construct()
    {
        if (!\function_exists('msgpack_pack')) {
            throw new \LogicException('ExtCodec needs the msgpack PHP extension (ext-msgpack)');
        }
        // PHP-specific object serialization would produce bytes Tarantool cannot read.
        \ini_set('msgpack.php_only', '0');
    }

    public function pack(mixed $value): string
    {
        if (\is_object($value)) {
            throw new \InvalidArgumentException('ExtCodec cannot pack objects (' . \get_class($value) . '); use PureCodec');
        }
        return \msgpack_pack($value);
    }

    public function unpack(string $data): mixed
    {
        $value = @\msgpack_unpack($data);
        if ($value === false && $data !== "\xc2") {
            throw new ProtocolException('Malformed MessagePack in response (ext-msgpack could not decode it)');
        }
        return $value;
    }
}
