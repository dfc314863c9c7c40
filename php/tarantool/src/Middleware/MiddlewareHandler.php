<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/** One middleware bound to the rest of the chain. */
final class MiddlewareHandler implements Handler
{
    private function __construct(private readonly Middleware $middleware, private readonly Handler $next)
    {
    }

    /** Wraps $handler so that $middleware[0] sees each request first. */
    public static function wrap(Handler $handler, Middleware ...$middleware): Handler
    {
        foreach (\array_reverse($middleware) as $m) {
            $handler = new self($m, $handler);
        }
        return $handler;
    }

    public function handle(Request $request): Response
    {
        return $this->middleware->process($request, $this->next);
    }
}
