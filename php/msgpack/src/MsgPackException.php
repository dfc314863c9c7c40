<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * The single exception type for malformed, truncated or hostile MessagePack input and for
 * values that cannot be packed. The offset is absolute within the stream fed to the
 * unpacker (bytes dropped by buffer compaction are counted), or -1 when packing.
 */
class MsgPackException extends \RuntimeException
{
    public function __construct(
        private readonly string $reason,
        private readonly int $offset = -1,
        ?\Throwable $previous = null,
    ) {
        parent::__construct(
            $offset >= 0 ? "MessagePack error at offset $offset: $reason" : "MessagePack error: $reason",
            0,
            $previous,
        );
    }

    public function getOffset(): int
    {
        return $this->offset;
    }

    public function getReason(): string
    {
        return $this->reason;
    }
}
