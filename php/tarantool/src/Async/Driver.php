<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/**
 * Makes progress on a future awaited outside a Fiber (or while no loop runs): a connection
 * reads its socket until the reply arrives, instead of needing an event loop.
 */
interface Driver
{
    public function block(Future $future): void;
}
