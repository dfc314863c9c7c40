<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Type;

/** Forces a PHP array to be packed as a MessagePack array; its keys are ignored, order is kept. */
final class Arr
{
    /** @param array<mixed> $list */
    public function __construct(public readonly array $list)
    {
    }
}
