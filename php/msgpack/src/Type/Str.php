<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Type;

/** Forces a string to be packed as MessagePack str, whatever the packer options. */
final class Str
{
    public function __construct(public readonly string $data)
    {
    }
}
