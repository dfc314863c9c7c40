<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * The server sent well-formed frames that break docs/protocol.md (e.g. no handshake).
 */
final class ProtocolException extends \RuntimeException
{
}
