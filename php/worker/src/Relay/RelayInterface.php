<?php

declare(strict_types=1);

namespace Ferry\Worker\Relay;

/**
 * Byte transport between the worker and the server. Framing lives above it (FrameParser),
 * so a relay only moves raw bytes.
 */
interface RelayInterface
{
    /**
     * Writes all bytes (callers batch several frames into one call).
     *
     * @throws RelayException
     */
    public function write(string $bytes): void;

    /**
     * Blocks until some bytes are available and returns them (one read, at most 64 KiB).
     *
     * @throws RelayClosedException when the server closed its end
     * @throws RelayException
     */
    public function read(): string;

    /**
     * The stream to watch with stream_select() for readability.
     *
     * @return resource
     */
    public function readStream();

    /**
     * True when the relay shares the process' STDOUT, so stray output must be diverted.
     */
    public function usesStdout(): bool;

    public function close(): void;
}
