<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/** One entry of a Tarantool error stack (a box.error object). */
final class BoxError
{
    /** @param array<int|string, mixed> $fields type-specific extra fields */
    public function __construct(
        public readonly string $type,
        public readonly string $message,
        public readonly int $code = 0,
        public readonly string $file = '',
        public readonly int $line = 0,
        public readonly int $errno = 0,
        public readonly array $fields = [],
    ) {
    }
}
