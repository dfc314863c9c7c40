<?php

declare(strict_types=1);

namespace Framework;

final class Route
{
    public readonly string $regex;

    /** @param array{0: class-string, 1: string} $handler */
    public function __construct(public readonly string $method, public readonly string $pattern, public readonly array $handler)
    {
        // "/orders/{id}" -> "#^/orders/(?P<id>\d+)$#": parameters are numeric ids in this app.
        $this->regex = '#^' . preg_replace('#\{(\w+)\}#', '(?P<$1>\d+)', $pattern) . '$#';
    }
}
