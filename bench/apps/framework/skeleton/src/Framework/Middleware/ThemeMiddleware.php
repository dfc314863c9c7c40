<?php

declare(strict_types=1);

namespace Framework\Middleware;

use Framework\Http\Request;
use Framework\Http\Response;

final class ThemeMiddleware implements Middleware
{
    public function process(Request $request, \Closure $next): Response
    {
        $theme = $request->cookie('theme', 'light');
        $request->attributes['theme'] = \in_array($theme, ['light', 'dark'], true) ? $theme : 'light';

        return $next($request);
    }
}
