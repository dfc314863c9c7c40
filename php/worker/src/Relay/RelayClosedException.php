<?php

declare(strict_types=1);

namespace Ferry\Worker\Relay;

/**
 * The server closed the relay: the worker has nobody left to answer and should exit.
 */
final class RelayClosedException extends RelayException
{
}
