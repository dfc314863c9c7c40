<?php

declare(strict_types=1);

namespace Framework\Middleware;

use Framework\Http\Request;
use Framework\Http\Response;

final class SessionMiddleware implements Middleware
{
    public function process(Request $request, \Closure $next): Response
    {
        $sid = $request->cookie('sid');
        $request->attributes['session'] = ['id' => $sid, 'guest' => $sid === ''];

        return $next($request);
    }
}
