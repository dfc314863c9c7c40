<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** No (complete) reply within the read timeout, or no connection within the connect timeout. */
final class TimeoutException extends ConnectionException
{
}
