<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** Base of every exception thrown by the connector. */
class TarantoolException extends \RuntimeException
{
}
