<?php

declare(strict_types=1);

namespace Framework;

/**
 * Keeps the last lines in memory; a real app would write them somewhere.
 */
final class Logger
{
    /** @var list<string> */
    private array $lines = [];

    public function info(string $message): void
    {
        $this->lines[] = $message;
        if (\count($this->lines) > 100) {
            array_shift($this->lines);
        }
    }
}
