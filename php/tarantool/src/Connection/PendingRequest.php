<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Async\Driver;
use Ferry\Tarantool\Async\Future;

/** A request written (or queued) on a connection, awaiting the reply with its sync. */
final class PendingRequest extends Future
{
    // Reply parts parked here between framing and decoding (see Connection::dispatch()).
    public int $code = 0;
    public int $schemaVersion = 0;
    public string $raw = '';

    /**
     * @param int $start offset of the request's first byte in the session's output stream:
     *   once the connection has written past it, the request is "maybe sent"
     */
    public function __construct(
        Driver $driver,
        public readonly int $sync,
        public readonly float $deadline,
        public readonly ?\Closure $onPush,
        public readonly int $start = 0,
        public readonly float $timeout = 0.0,
    ) {
        parent::__construct($driver);
    }
}
