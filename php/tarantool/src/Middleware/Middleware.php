<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * A link of the request pipeline: inspect or refuse the request, call $next (any number of
 * times), inspect or translate the outcome. Runs in the caller's Fiber, so it may sleep
 * (Scheduler::sleep) without blocking other Fibers.
 */
interface Middleware
{
    public function process(Request $request, Handler $next): Response;
}
