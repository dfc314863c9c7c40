<?php

declare(strict_types=1);

namespace Ferry\Worker\Relay;

class RelayException extends \RuntimeException
{
}
