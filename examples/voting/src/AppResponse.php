<?php

declare(strict_types=1);

namespace Voting;

final class AppResponse
{
    /** @param array<string, string|list<string>> $headers */
    public function __construct(
        public int $status,
        public array $headers,
        public string $body,
    ) {
    }

    public static function html(string $body, int $status = 200): self
    {
        return new self($status, ['Content-Type' => 'text/html; charset=utf-8'], $body);
    }

    /** @param array<string, mixed> $data */
    public static function json(array $data, int $status = 200): self
    {
        return new self($status, ['Content-Type' => 'application/json'], json_encode($data, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES) . "\n");
    }

    public static function redirect(string $location): self
    {
        return new self(303, ['Location' => $location, 'Content-Type' => 'text/plain; charset=utf-8'], "See $location\n");
    }

    public function withCookie(string $setCookie): self
    {
        $this->headers['Set-Cookie'] = [...(array) ($this->headers['Set-Cookie'] ?? []), $setCookie];
        return $this;
    }
}
