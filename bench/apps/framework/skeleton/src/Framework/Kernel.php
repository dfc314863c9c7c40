<?php

declare(strict_types=1);

namespace Framework;

use Framework\Http\Request;
use Framework\Http\Response;

/**
 * Request -> middleware -> route -> controller -> response. Holds no per-request state,
 * so one instance can serve many requests in a long-lived worker.
 */
final class Kernel
{
    /** @param list<Middleware\Middleware> $middleware */
    public function __construct(
        private readonly Container $container,
        private readonly Router $router,
        private readonly array $middleware,
        private readonly View $view,
    ) {
    }

    public function handle(Request $request): Response
    {
        $core = function (Request $request): Response {
            try {
                [$route, $params] = $this->router->match($request->method, $request->path);
                [$class, $action] = $route->handler;

                return $this->container->get($class)->$action($request, ...$params);
            } catch (NotFoundException $e) {
                return new Response($this->view->render('error', ['title' => 'Not found',
                    'message' => $e->getMessage(), 'theme' => $request->attributes['theme'] ?? 'light']), 404);
            }
        };
        $next = $core;
        foreach (array_reverse($this->middleware) as $mw) {
            $next = static fn (Request $r): Response => $mw->process($r, $next);
        }

        return $next($request);
    }

    public function routes(): int
    {
        return $this->router->count();
    }
}
