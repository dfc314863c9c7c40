<?php

declare(strict_types=1);

namespace Voting;

use Ferry\Tarantool\Exception\ProtocolException;

final class Sticker
{
    public function __construct(
        public readonly int $id,
        public readonly int $pack,
        public readonly string $name,
        public readonly string $image,
        public readonly int $rating,
    ) {
    }

    /** @param mixed $tuple {id, pack, name, image, rating} as stored by tarantool/init.lua */
    public static function fromTuple(mixed $tuple): self
    {
        if (!\is_array($tuple) || \count($tuple) < 5 || !\is_int($tuple[0]) || !\is_int($tuple[1])
            || !\is_string($tuple[2]) || !\is_string($tuple[3]) || !\is_int($tuple[4])) {
            throw new ProtocolException('Unexpected sticker tuple from Tarantool: ' . json_encode($tuple, JSON_PARTIAL_OUTPUT_ON_ERROR));
        }
        return new self($tuple[0], $tuple[1], $tuple[2], $tuple[3], $tuple[4]);
    }
}
