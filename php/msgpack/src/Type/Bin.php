<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Type;

/** Forces a string to be packed as MessagePack bin (raw bytes), whatever the packer options. */
final class Bin
{
    public function __construct(public readonly string $data)
    {
    }
}
