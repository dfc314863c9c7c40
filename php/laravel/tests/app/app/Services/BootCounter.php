<?php

declare(strict_types=1);

namespace App\Services;

/** A singleton resolved at boot and listed in config/ferry.php "scoped": rebuilt for every request. */
final class BootCounter
{
    public int $count = 0;
}
