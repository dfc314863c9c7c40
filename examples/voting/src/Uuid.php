<?php

declare(strict_types=1);

namespace Voting;

final class Uuid
{
    /** The canonical lower-case form Tarantool's uuid.str() produces; anything else is not ours. */
    public static function isValid(string $value): bool
    {
        return \strlen($value) === 36
            && preg_match('/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/D', $value) === 1;
    }
}
