<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** The peer sent bytes that are not a valid IPROTO frame (or is not Tarantool). */
final class ProtocolException extends TarantoolException
{
}
