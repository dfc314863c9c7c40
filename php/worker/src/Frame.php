<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * One Goridge v3 frame as it travels on the relay (see docs/protocol.md).
 */
final class Frame
{
    public const CONTROL = 0x01;
    public const CODEC_RAW = 0x04;
    public const JSON = 0x08;
    public const MSGPACK = 0x10;
    public const GOB = 0x20;
    public const ERROR = 0x40;
    public const PROTO = 0x80;

    public const STREAM = 0x01;
    public const STOP = 0x02;
    public const PING = 0x04;
    public const PONG = 0x08;
    /**
     * On an answer: terminate hooks run after it, and the worker sends FINISHED once they are
     * done. Until then the server routes new jobs to other workers.
     */
    public const FINISHING = 0x10;
    /** The control payload that ends a FINISHING answer's hooks. */
    public const FINISHED = '{"finished":true}';

    /**
     * @param list<int> $options
     */
    public function __construct(
        public readonly int $flags,
        public readonly array $options = [],
        public readonly string $payload = '',
        public readonly int $streamFlags = 0,
    ) {
    }

    public function has(int $flag): bool
    {
        return ($this->flags & $flag) === $flag;
    }
}
