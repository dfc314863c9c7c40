<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * Executes one request and returns its reply, throwing on failure. Implemented by Connection,
 * ReplicaSet and each middleware link. Calls look synchronous; inside a Fiber with the loop
 * running they only suspend that Fiber.
 */
interface Handler
{
    public function handle(Request $request): Response;
}
