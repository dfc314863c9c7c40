<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/** A UUID held as its 16 bytes in RFC 4122 (big-endian field) order. */
final class Uuid implements \Stringable
{
    private function __construct(private readonly string $bytes)
    {
    }

    public static function fromBytes(string $bytes): self
    {
        if (\strlen($bytes) !== 16) {
            throw new \InvalidArgumentException('a UUID is 16 bytes, got ' . \strlen($bytes));
        }
        return new self($bytes);
    }

    /** Canonical "8-4-4-4-12" hex form, any case; braces and "urn:uuid:" are not accepted. */
    public static function fromString(string $s): self
    {
        if (!\preg_match('/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/D', $s)) {
            throw new \InvalidArgumentException("invalid UUID string \"$s\"");
        }
        return new self(\hex2bin(\str_replace('-', '', $s)));
    }

    /** A random (version 4, variant 1) UUID. */
    public static function v4(): self
    {
        $b = \random_bytes(16);
        $b[6] = \chr((\ord($b[6]) & 0x0f) | 0x40);
        $b[8] = \chr((\ord($b[8]) & 0x3f) | 0x80);
        return new self($b);
    }

    public function toBytes(): string
    {
        return $this->bytes;
    }

    public function equals(self $other): bool
    {
        return $this->bytes === $other->bytes;
    }

    /** Lowercase canonical form. */
    public function __toString(): string
    {
        $h = \bin2hex($this->bytes);
        return \substr($h, 0, 8) . '-' . \substr($h, 8, 4) . '-' . \substr($h, 12, 4) . '-'
            . \substr($h, 16, 4) . '-' . \substr($h, 20);
    }
}
