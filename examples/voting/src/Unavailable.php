<?php

declare(strict_types=1);

namespace Voting;

/** Tarantool cannot be reached right now; the page becomes a 503 and the next request retries. */
final class Unavailable extends \RuntimeException
{
}
