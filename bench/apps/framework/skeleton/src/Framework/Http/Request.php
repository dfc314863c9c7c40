<?php

declare(strict_types=1);

namespace Framework\Http;

final class Request
{
    /** @var array<string, mixed> set by middleware and the router */
    public array $attributes = [];

    /**
     * @param array<string, mixed>  $query
     * @param array<string, string> $cookies
     */
    public function __construct(
        public readonly string $method,
        public readonly string $path,
        public readonly array $query = [],
        public readonly array $cookies = [],
    ) {
    }

    public function cookie(string $name, string $default = ''): string
    {
        return $this->cookies[$name] ?? $default;
    }
}
