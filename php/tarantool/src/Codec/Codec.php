<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Codec;

/**
 * MessagePack for request arguments and response bodies. The connector writes IPROTO
 * headers and small integers itself; everything user-supplied goes through pack().
 */
interface Codec
{
    public function pack(mixed $value): string;

    /** Decodes exactly one value spanning all of $data. */
    public function unpack(string $data): mixed;
}
