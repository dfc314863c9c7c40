<?php

declare(strict_types=1);

namespace Framework;

/**
 * In-process memo. Under FPM it lives one request; in a Ferry worker it lives as long as
 * the process, which is the point being measured.
 */
final class Cache
{
    /** @var array<string, mixed> */
    private array $items = [];

    public function remember(string $key, \Closure $compute): mixed
    {
        if (!\array_key_exists($key, $this->items)) {
            $this->items[$key] = $compute();
        }

        return $this->items[$key];
    }
}
