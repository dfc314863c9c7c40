<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

/** A successful reply; error replies become ServerException before reaching callers. */
final class Response
{
    /** @param array<int, mixed> $body decoded body map */
    public function __construct(
        public readonly int $sync,
        public readonly int $schemaVersion,
        public readonly array $body,
    ) {
    }

    /** IPROTO_DATA: tuples for box requests, return values for CALL/EVAL, rows for SQL. */
    public function data(): array
    {
        return $this->body[Iproto::DATA] ?? [];
    }
}
