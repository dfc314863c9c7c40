<?php

declare(strict_types=1);

namespace App\Logging;

use Monolog\Handler\BufferHandler;
use Monolog\Handler\StreamHandler;
use Monolog\Logger;

/**
 * A channel that holds its records until the logger is reset or closed, like Monolog's
 * buffer and fingers-crossed handlers: the worker must flush it after every request.
 */
final class BufferedLogger
{
    /** @param array<string, mixed> $config */
    public function __invoke(array $config): Logger
    {
        return new Logger('buffered', [new BufferHandler(new StreamHandler($config['path']))]);
    }
}
