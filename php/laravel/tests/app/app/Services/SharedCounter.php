<?php

declare(strict_types=1);

namespace App\Services;

/** A singleton resolved at boot and not scoped: one instance for the life of the worker. */
final class SharedCounter
{
    public int $count = 0;
}
