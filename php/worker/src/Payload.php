<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * One job as the application sees it: the context (for HTTP, the serialized request
 * description), the body, and the server-chosen job id.
 */
final class Payload
{
    public function __construct(
        public readonly string $body = '',
        public readonly string $context = '',
        public readonly int $id = 0,
    ) {
    }
}
