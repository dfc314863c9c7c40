<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** One entry of the extended error stack (IPROTO_ERROR 0x52 / MP_ERROR_STACK). */
final class ErrorFrame
{
    /** @param array<mixed> $fields */
    public function __construct(
        public readonly string $type,
        public readonly string $message,
        public readonly int $code,
        public readonly string $file = '',
        public readonly int $line = 0,
        public readonly int $errno = 0,
        public readonly array $fields = [],
    ) {
    }

    /** @param array<int, mixed> $map keys MP_ERROR_TYPE 0 .. MP_ERROR_FIELDS 6 */
    public static function fromMap(array $map): self
    {
        return new self(
            (string) ($map[0] ?? ''),
            (string) ($map[3] ?? ''),
            (int) ($map[5] ?? 0),
            (string) ($map[1] ?? ''),
            (int) ($map[2] ?? 0),
            (int) ($map[4] ?? 0),
            \is_array($map[6] ?? null) ? $map[6] : [],
        );
    }
}
