<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * Goridge v3 frame encoder/decoder, byte-exact with docs/protocol.md.
 *
 * Decoding validates the fixed 12-byte header (version, CRC, option count, payload size
 * limit) before touching options or payload, so hostile input can never make us allocate
 * more than the configured maximum.
 */
final class FrameCodec
{
    public const VERSION = 1;
    public const HEADER_SIZE = 12;
    public const MAX_OPTIONS = 10;
    public const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;
    private const UINT32_MAX = 0xFFFFFFFF;

    public readonly int $maxPayload;

    public function __construct(int $maxPayload = self::DEFAULT_MAX_PAYLOAD)
    {
        if ($maxPayload < 0 || $maxPayload > self::UINT32_MAX) {
            throw new \InvalidArgumentException("maxPayload must be within 0..4294967295, got $maxPayload");
        }
        $this->maxPayload = $maxPayload;
    }

    /**
     * A job or answer frame (CODEC_RAW, options [contextLength, id]) without encode()'s
     * checks: every answer takes this path, and the caller guarantees the values fit.
     */
    public static function job(int $contextLength, int $id, string $payload): string
    {
        $head = "\x15\x04" . pack('V', \strlen($payload)); // version 1, 5 header words; CODEC_RAW

        return $head . pack('V', crc32($head)) . "\0\0" . pack('VV', $contextLength, $id) . $payload;
    }

    /**
     * @param list<int> $options
     */
    public static function encode(int $flags, array $options = [], string $payload = '', int $streamFlags = 0): string
    {
        if ($flags < 0 || $flags > 0xFF) {
            throw new FrameException(FrameException::REASON_INVALID, "frame flags must fit in one byte, got $flags");
        }
        if ($streamFlags < 0 || $streamFlags > 0xFF) {
            throw new FrameException(FrameException::REASON_INVALID, "stream flags must fit in one byte, got $streamFlags");
        }
        $count = \count($options);
        if ($count > self::MAX_OPTIONS) {
            throw new FrameException(FrameException::REASON_OPTIONS, "a frame carries at most 10 options, got $count");
        }
        $length = \strlen($payload);
        if ($length > self::UINT32_MAX) {
            throw new FrameException(FrameException::REASON_TOO_LARGE, "payload of $length bytes does not fit a uint32 length");
        }
        $packedOptions = '';
        foreach ($options as $i => $option) {
            if (!\is_int($option) || $option < 0 || $option > self::UINT32_MAX) {
                throw new FrameException(FrameException::REASON_OPTIONS, "option #$i must be a uint32, got " . var_export($option, true));
            }
            $packedOptions .= pack('V', $option);
        }
        $head = \chr((self::VERSION << 4) | (3 + $count)) . \chr($flags) . pack('V', $length);

        return $head . pack('V', crc32($head)) . \chr($streamFlags) . "\0" . $packedOptions . $payload;
    }

    /**
     * Decodes a buffer that must hold exactly one complete frame.
     */
    public function decode(string $bytes): Frame
    {
        $header = $this->readHeader($bytes, 0);
        if ($header === null) {
            throw new FrameException(
                FrameException::REASON_TRUNCATED,
                'frame truncated: ' . \strlen($bytes) . ' bytes, the header alone needs 12'
            );
        }
        [$size] = $header;
        $available = \strlen($bytes);
        if ($available < $size) {
            throw new FrameException(
                FrameException::REASON_TRUNCATED,
                "frame truncated: header announces $size bytes, got $available"
            );
        }
        if ($available > $size) {
            throw new FrameException(
                FrameException::REASON_INVALID,
                'trailing data: frame is ' . $size . ' bytes, buffer has ' . $available
            );
        }

        return $this->build($bytes, 0, $header);
    }

    /**
     * Validates the header starting at $offset.
     *
     * @return array{int, int, int, int, int}|null [total size, flags, option count, payload length, stream flags],
     *         or null when fewer than 12 bytes are available
     */
    public function readHeader(string $buffer, int $offset): ?array
    {
        if (\strlen($buffer) - $offset < self::HEADER_SIZE) {
            return null;
        }
        $first = \ord($buffer[$offset]);
        $version = $first >> 4;
        if ($version !== self::VERSION) {
            throw new FrameException(
                FrameException::REASON_VERSION,
                "unsupported frame version $version at offset $offset (expected 1)"
            );
        }
        // Same check order as internal/frame, so both sides name the same fault.
        $words = $first & 0x0F;
        if ($words < 3 || $words - 3 > self::MAX_OPTIONS) {
            throw new FrameException(
                FrameException::REASON_OPTIONS,
                "invalid header length of $words words at offset $offset (3 + at most 10 options)"
            );
        }
        $stored = unpack('V', $buffer, $offset + 6)[1];
        $computed = crc32(substr($buffer, $offset, 6));
        if ($stored !== $computed) {
            throw new FrameException(
                FrameException::REASON_CRC,
                sprintf('header CRC mismatch at offset %d: stored %08x, computed %08x', $offset, $stored, $computed)
            );
        }
        $length = unpack('V', $buffer, $offset + 2)[1];
        if ($length > $this->maxPayload) {
            throw new FrameException(
                FrameException::REASON_TOO_LARGE,
                "payload of $length bytes at offset $offset exceeds the limit of {$this->maxPayload} bytes"
            );
        }
        $optionCount = $words - 3;

        return [
            self::HEADER_SIZE + 4 * $optionCount + $length,
            \ord($buffer[$offset + 1]),
            $optionCount,
            $length,
            \ord($buffer[$offset + 10]),
        ];
    }

    /**
     * @param array{int, int, int, int, int} $header as returned by readHeader(); the frame must be complete
     */
    public function build(string $buffer, int $offset, array $header): Frame
    {
        [, $flags, $optionCount, $length, $streamFlags] = $header;
        $options = $optionCount === 0
            ? []
            : array_values(unpack('V' . $optionCount, $buffer, $offset + self::HEADER_SIZE));
        $start = $offset + self::HEADER_SIZE + 4 * $optionCount;

        return new Frame($flags, $options, substr($buffer, $start, $length), $streamFlags);
    }
}
