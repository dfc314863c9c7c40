<?php

declare(strict_types=1);

namespace App\Services;

/** A singleton first resolved during a request: it lives in that request's sandbox only. */
final class LazyCounter
{
    public int $count = 0;
}
