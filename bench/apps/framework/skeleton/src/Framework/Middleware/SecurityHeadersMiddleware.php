<?php

declare(strict_types=1);

namespace Framework\Middleware;

use Framework\Http\Request;
use Framework\Http\Response;

final class SecurityHeadersMiddleware implements Middleware
{
    public function process(Request $request, \Closure $next): Response
    {
        $response = $next($request);
        $response->headers += ['X-Content-Type-Options' => 'nosniff', 'X-Frame-Options' => 'DENY'];

        return $response;
    }
}
