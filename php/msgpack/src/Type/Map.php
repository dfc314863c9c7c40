<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Type;

/**
 * Forces a PHP array to be packed as a MessagePack map, even when it is a list or empty
 * (an empty PHP array otherwise packs as an empty array, 0x90).
 */
final class Map
{
    /** @param array<int|string, mixed> $map */
    public function __construct(public readonly array $map)
    {
    }
}
