<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * Incremental frame reader over a byte stream.
 *
 * Bytes are appended to one buffer and frames are sliced at a moving offset; consumed bytes
 * are dropped once per push(), so each byte is copied a bounded number of times no matter
 * how the stream is chunked (a 10 MiB payload arriving in 64 KiB reads stays linear).
 */
final class FrameParser
{
    private string $buffer = '';
    private int $offset = 0;
    /** @var array{int, int, int, int, int}|null header of the frame we are waiting to complete */
    private ?array $header = null;
    /** whether ext/ferry's frame reader is there */
    private static ?bool $ext = null;

    public function __construct(private readonly FrameCodec $codec = new FrameCodec())
    {
    }

    public function push(string $bytes): void
    {
        if ($this->offset > 0) {
            $this->buffer = substr($this->buffer, $this->offset) . $bytes;
            $this->offset = 0;
        } else {
            $this->buffer .= $bytes;
        }
    }

    /**
     * Returns the next complete frame, or null until more bytes arrive.
     *
     * @throws FrameException as soon as a header is invalid; the stream cannot be resynchronised after that
     */
    public function next(): ?Frame
    {
        if ($this->header === null) {
            $this->header = $this->codec->readHeader($this->buffer, $this->offset);
            if ($this->header === null) {
                return null;
            }
        }
        $size = $this->header[0];
        if (\strlen($this->buffer) - $this->offset < $size) {
            return null;
        }
        $frame = $this->codec->build($this->buffer, $this->offset, $this->header);
        $this->offset += $size;
        $this->header = null;
        if ($this->offset === \strlen($this->buffer)) {
            $this->buffer = '';
            $this->offset = 0;
        }

        return $frame;
    }

    /**
     * @return list<Frame> every complete frame currently buffered
     */
    public function drain(): array
    {
        // The hot path of every worker: well-formed frames are sliced here in one
        // loop with one unpack() per header. Anything unusual (a frame split across
        // reads, a bad header) goes through next(), which names the fault.
        if ($this->header === null && (self::$ext ??= \function_exists('Ferry\Ext\frames_read'))) {
            try {
                [$frames, $offset] = \Ferry\Ext\frames_read($this->buffer, $this->offset, $this->codec->maxPayload);
                if ($offset === \strlen($this->buffer)) {
                    $this->buffer = '';
                    $this->offset = 0;
                } else {
                    $this->offset = $offset; // the start of a frame the next read completes
                }

                return $frames;
            } catch (\Ferry\Ext\FrameException) {
                // A bad header: the code below throws the SDK's own exception for it.
            }
        }
        $frames = [];
        $buffer = $this->buffer;
        $offset = $this->offset;
        $end = \strlen($buffer);
        $max = $this->codec->maxPayload;
        while ($this->header === null && $end - $offset >= FrameCodec::HEADER_SIZE) {
            $h = unpack('Cfirst/Cflags/Vlength/Vcrc/Cstream', $buffer, $offset);
            $options = ($h['first'] & 0x0F) - 3;
            $length = $h['length'];
            $size = FrameCodec::HEADER_SIZE + 4 * $options + $length;
            if ($h['first'] >> 4 !== FrameCodec::VERSION || $options < 0 || $options > FrameCodec::MAX_OPTIONS
                || $length > $max || $end - $offset < $size || $h['crc'] !== crc32(substr($buffer, $offset, 6))) {
                break;
            }
            $frames[] = new Frame(
                $h['flags'],
                $options === 0 ? [] : array_values(unpack('V' . $options, $buffer, $offset + FrameCodec::HEADER_SIZE)),
                substr($buffer, $offset + FrameCodec::HEADER_SIZE + 4 * $options, $length),
                $h['stream'],
            );
            $offset += $size;
        }
        if ($offset === $end) {
            $this->buffer = '';
            $this->offset = 0;

            return $frames;
        }
        $this->offset = $offset;
        while (($frame = $this->next()) !== null) {
            $frames[] = $frame;
        }

        return $frames;
    }

    /**
     * Removes and returns the bytes not parsed yet (the start of a frame), for a reader
     * that goes on from them.
     */
    public function take(): string
    {
        $rest = $this->offset === 0 ? $this->buffer : substr($this->buffer, $this->offset);
        $this->buffer = '';
        $this->offset = 0;
        $this->header = null;

        return $rest;
    }

    public function buffered(): int
    {
        return \strlen($this->buffer) - $this->offset;
    }
}
