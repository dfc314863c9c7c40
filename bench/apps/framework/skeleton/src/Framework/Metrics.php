<?php

declare(strict_types=1);

namespace Framework;

final class Metrics
{
    /** @var array<string, int> */
    private array $counters = [];

    public function increment(string $name): void
    {
        $this->counters[$name] = ($this->counters[$name] ?? 0) + 1;
    }

    public function get(string $name): int
    {
        return $this->counters[$name] ?? 0;
    }
}
