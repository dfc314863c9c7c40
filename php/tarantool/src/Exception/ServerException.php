<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

use Ferry\Tarantool\Protocol\Iproto;

/**
 * Tarantool answered with an error (response type 0x8000 | code). getCode() is the box error
 * code (errcode.h), $stack the extended error stack, innermost cause last as Tarantool sends it.
 */
final class ServerException extends TarantoolException
{
    /** @param list<ErrorFrame> $stack */
    public function __construct(string $message, int $code, public readonly array $stack = [])
    {
        parent::__construct($message, $code);
    }

    /** @param array<int, mixed> $body decoded response body */
    public static function fromBody(int $code, array $body): self
    {
        $stack = [];
        $entries = $body[Iproto::ERROR][0] ?? null;
        if (\is_array($entries)) {
            foreach ($entries as $entry) {
                if (\is_array($entry)) {
                    $stack[] = ErrorFrame::fromMap($entry);
                }
            }
        }
        $message = $body[Iproto::ERROR_24] ?? ($stack[0]->message ?? 'unknown error');
        return new self((string) $message, $code, $stack);
    }

    public function isSchemaChange(): bool
    {
        return $this->getCode() === Iproto::ER_WRONG_SCHEMA_VERSION;
    }
}
