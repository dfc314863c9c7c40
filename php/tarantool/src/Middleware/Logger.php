<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

/**
 * The one PSR-3 method LoggingMiddleware uses, for applications without psr/log. Any
 * Psr\Log\LoggerInterface works as well, without implementing this.
 */
interface Logger
{
    /** @param array<string, mixed> $context */
    public function log($level, string|\Stringable $message, array $context = []): void;
}
