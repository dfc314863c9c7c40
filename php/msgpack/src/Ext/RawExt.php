<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * An ext value with no registered extension. Packing it reproduces the original bytes
 * (with the smallest ext header for its length).
 */
final class RawExt
{
    public function __construct(public readonly int $type, public readonly string $data)
    {
        if ($type < -128 || $type > 127) {
            throw new \InvalidArgumentException("Ext type code $type is outside -128..127");
        }
    }
}
