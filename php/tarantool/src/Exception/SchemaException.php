<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/** A space or index name could not be resolved through _vspace / _vindex. */
final class SchemaException extends TarantoolException
{
}
