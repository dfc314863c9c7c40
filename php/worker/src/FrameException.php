<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * A frame could not be encoded or decoded. $reason is one of the REASON_* constants so
 * callers (and the shared test vectors) can tell the failures apart without parsing text.
 */
final class FrameException extends \RuntimeException
{
    public const REASON_CRC = 'crc';
    public const REASON_VERSION = 'version';
    public const REASON_OPTIONS = 'options';
    public const REASON_TOO_LARGE = 'too_large';
    public const REASON_TRUNCATED = 'truncated';
    public const REASON_INVALID = 'invalid';

    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}
