<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * Retries on connection failures with exponential backoff (the connection reopens on the next
 * attempt). A request reported "not sent" (none of its bytes left the process) is always
 * retried; a "maybe sent" one only if it is idempotent: read-only (SELECT, PING, read-only SQL)
 * or declared so by the caller (Client::call(..., idempotent: true), Client::with()).
 * Replaying anything else could apply it twice, so its ConnectionException is passed on and
 * the caller decides. Backoff sleeps suspend only the current Fiber when the loop runs.
 */
final class RetryMiddleware implements Middleware
{
    public function __construct(
        private readonly int $maxRetries = 3,
        private readonly float $baseDelay = 0.05,
        private readonly float $maxDelay = 1.0,
        private readonly float $multiplier = 2.0,
        private readonly bool $jitter = true,
    ) {
        if ($maxRetries < 0 || $baseDelay < 0 || $maxDelay < 0 || $multiplier < 1) {
            throw new \InvalidArgumentException('RetryMiddleware: retries and delays must be >= 0 and the multiplier >= 1');
        }
    }

    public function process(Request $request, Handler $next): Response
    {
        $delay = $this->baseDelay;
        for ($attempt = 0; ; $attempt++) {
            try {
                return $next->handle($request);
            } catch (ConnectionException $e) {
                if ($attempt >= $this->maxRetries || ($e->requestSent && !$request->isIdempotent())) {
                    throw $e;
                }
            }
            $sleep = \min($delay, $this->maxDelay);
            if ($this->jitter) {
                // Spread reconnect storms of many workers over half a delay.
                $sleep *= 0.5 + \mt_rand() / \mt_getrandmax() / 2;
            }
            Scheduler::sleep($sleep);
            $delay *= $this->multiplier;
        }
    }
}
