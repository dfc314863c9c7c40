<?php

declare(strict_types=1);

namespace Framework;

/**
 * Static routes in a hash, the rest tried in order; built once at boot.
 */
final class Router
{
    /** @var array<string, Route> "GET /path" => route */
    private array $static = [];
    /** @var list<Route> */
    private array $dynamic = [];

    /** @param array{0: class-string, 1: string} $handler */
    public function get(string $pattern, array $handler): void
    {
        $route = new Route('GET', $pattern, $handler);
        if (str_contains($pattern, '{')) {
            $this->dynamic[] = $route;
        } else {
            $this->static["GET $pattern"] = $route;
        }
    }

    /** @return array{0: Route, 1: array<string, string>} */
    public function match(string $method, string $path): array
    {
        if (isset($this->static["$method $path"])) {
            return [$this->static["$method $path"], []];
        }
        foreach ($this->dynamic as $route) {
            if ($route->method === $method && preg_match($route->regex, $path, $m)) {
                return [$route, array_filter($m, 'is_string', ARRAY_FILTER_USE_KEY)];
            }
        }
        throw new NotFoundException("no route for $method $path");
    }

    public function count(): int
    {
        return \count($this->static) + \count($this->dynamic);
    }
}
