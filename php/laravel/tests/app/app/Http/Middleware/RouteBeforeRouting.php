<?php

declare(strict_types=1);

namespace App\Http\Middleware;

use Closure;
use Illuminate\Http\Request;
use Illuminate\Routing\Router;
use Symfony\Component\HttpFoundation\Response;

/**
 * A global middleware runs before routing: the router's current route must be nobody's
 * yet, not the previous request's.
 */
final class RouteBeforeRouting
{
    public function __construct(private readonly Router $router)
    {
    }

    public function handle(Request $request, Closure $next): Response
    {
        $request->attributes->set('route_before_routing', $this->router->current()?->uri());

        return $next($request);
    }
}
