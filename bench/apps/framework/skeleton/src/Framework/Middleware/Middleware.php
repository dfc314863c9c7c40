<?php

declare(strict_types=1);

namespace Framework\Middleware;

use Framework\Http\Request;
use Framework\Http\Response;

interface Middleware
{
    /** @param \Closure(Request): Response $next */
    public function process(Request $request, \Closure $next): Response;
}
