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

    public function __construct(
        Driver $driver,
        public readonly int $sync,
        public readonly float $deadline,
        public readonly ?\Closure $onPush,
    ) {
        parent::__construct($driver);
    }
}
