<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * Logs each request with its duration: successes at $level (debug), slow ones at warning,
 * server errors at error, connection failures at warning (a retry may still succeed).
 * $logger is a PSR-3 logger or any object with log($level, $message, $context).
 */
final class LoggingMiddleware implements Middleware
{
    private readonly object $logger;

    public function __construct(object $logger, private readonly string $level = 'debug', private readonly float $slowSeconds = 1.0)
    {
        if (!\method_exists($logger, 'log')) {
            throw new \InvalidArgumentException(\sprintf('Logger %s has no log($level, $message, $context) method', \get_class($logger)));
        }
        $this->logger = $logger;
    }

    public function process(Request $request, Handler $next): Response
    {
        $start = \microtime(true);
        try {
            $response = $next->handle($request);
        } catch (\Throwable $e) {
            $ms = (\microtime(true) - $start) * 1000;
            $context = ['request' => $request->describe(), 'duration_ms' => \round($ms, 3), 'exception' => $e];
            if ($e instanceof ServerException) {
                $context['code'] = $e->getCode();
                $this->logger->log('error', 'Tarantool {request} failed with error {code}: ' . $e->getMessage(), $context);
            } elseif ($e instanceof ConnectionException) {
                $this->logger->log('warning', 'Tarantool {request}: connection failure: ' . $e->getMessage(), $context);
            } else {
                $this->logger->log('error', 'Tarantool {request} failed: ' . $e->getMessage(), $context);
            }
            throw $e;
        }
        $seconds = \microtime(true) - $start;
        $context = ['request' => $request->describe(), 'duration_ms' => \round($seconds * 1000, 3)];
        if ($seconds >= $this->slowSeconds) {
            $this->logger->log('warning', 'Slow Tarantool request {request} took {duration_ms} ms', $context);
        } else {
            $this->logger->log($this->level, 'Tarantool {request} took {duration_ms} ms', $context);
        }
        return $response;
    }
}
