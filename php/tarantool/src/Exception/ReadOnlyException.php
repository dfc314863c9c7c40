<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** A request was refused locally by the ReadOnlyFirewall middleware (never sent). */
final class ReadOnlyException extends TarantoolException
{
}
