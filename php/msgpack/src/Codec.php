<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/** Whole-message encoding and decoding (no streaming). */
interface Codec
{
    public function pack(mixed $value): string;

    /**
     * Decodes $data, which must hold exactly one complete value: truncated input raises
     * InsufficientData, trailing bytes MsgPackException.
     */
    public function unpack(string $data): mixed;
}
