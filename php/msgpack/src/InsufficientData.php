<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * The buffer ends inside a value. For a stream this is not an error: append() more bytes
 * (at least getMissing()) and retry. For a complete message it means truncated input.
 */
final class InsufficientData extends MsgPackException
{
    public function __construct(string $reason, int $offset, private readonly int $missing)
    {
        parent::__construct($reason, $offset);
    }

    /** Lower bound of the number of bytes still needed (always >= 1). */
    public function getMissing(): int
    {
        return $this->missing;
    }
}
