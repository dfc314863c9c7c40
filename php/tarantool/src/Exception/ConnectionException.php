<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Exception;

/**
 * The transport failed: connect refused, greeting/auth failed, socket closed or broken.
 *
 * $requestSent is true when the request is "maybe sent": at least one byte of its frame was
 * handed to the socket, so the server may have executed it and nobody can tell. False means
 * "not sent": none of its bytes left the process (it was still queued behind an earlier frame
 * when the write failed, or the connection never opened), so replaying it is safe. Retry and
 * failover replay a maybe-sent request only if it is idempotent (Request::isIdempotent()).
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

    /** Alias of $requestSent that reads like what it means. */
    public function maybeSent(): bool
    {
        return $this->requestSent;
    }

    public function withRequestSent(bool $sent): static
    {
        return new static($this->getMessage(), $this->uri, $sent, $this->getPrevious());
    }
}
