<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

/**
 * Thrown into a streamed body's generator (Response::stream()) at its current yield when
 * the client has gone: the rest of the body would reach nobody.
 */
final class StreamStoppedException extends \RuntimeException
{
}
