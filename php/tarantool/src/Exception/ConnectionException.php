<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/**
 * The transport failed: connect refused, greeting/auth failed, socket closed or broken.
 * $requestSent tells retry logic whether the server may already have executed the request
 * (a write must then not be replayed blindly).
 */
class ConnectionException extends TarantoolException
{
    public function __construct(
        string $message,
        public readonly string $uri = '',
        public readonly bool $requestSent = false,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }

    public function withRequestSent(bool $sent): static
    {
        return new static($this->getMessage(), $this->uri, $sent, $this->getPrevious());
    }
}
