<?php

declare(strict_types=1);

namespace App\Services;

/** Bound with $app->scoped() and resolved at boot: rebuilt for every request. */
final class RequestCounter
{
    public int $count = 0;
}
