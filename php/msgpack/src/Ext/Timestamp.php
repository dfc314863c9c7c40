<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * The spec's timestamp (ext -1): signed seconds since the Unix epoch plus nanoseconds
 * (0..999999999), i.e. $seconds + $nanoseconds / 1e9, even for negative $seconds.
 */
final class Timestamp implements \Stringable
{
    public function __construct(public readonly int $seconds, public readonly int $nanoseconds = 0)
    {
        if ($nanoseconds < 0 || $nanoseconds > 999_999_999) {
            throw new \InvalidArgumentException("nanoseconds $nanoseconds outside 0..999999999");
        }
    }

    public static function fromDateTime(\DateTimeInterface $dt): self
    {
        return new self($dt->getTimestamp(), (int) $dt->format('u') * 1000);
    }

    public static function now(): self
    {
        [$usec, $sec] = explode(' ', microtime());
        return new self((int) $sec, (int) round((float) $usec * 1e6) * 1000);
    }

    /** UTC DateTimeImmutable; PHP keeps microseconds, so sub-microsecond digits are dropped. */
    public function toDateTime(): \DateTimeImmutable
    {
        $dt = \DateTimeImmutable::createFromFormat('U', (string) $this->seconds, new \DateTimeZone('UTC'));
        if ($dt === false) {
            throw new \RangeException("timestamp {$this->seconds} cannot be represented as a DateTime");
        }
        return $dt->setTime(
            (int) $dt->format('H'),
            (int) $dt->format('i'),
            (int) $dt->format('s'),
            intdiv($this->nanoseconds, 1000),
        );
    }

    /** Seconds with a 9-digit fraction, e.g. "1514862245.678901234". */
    public function __toString(): string
    {
        if ($this->seconds < 0 && $this->nanoseconds > 0) {
            // -1 s + 5 ns is -0.999999995: the fraction counts towards zero, not away from it.
            return sprintf('-%d.%09d', -($this->seconds + 1), 1_000_000_000 - $this->nanoseconds);
        }
        return sprintf('%d.%09d', $this->seconds, $this->nanoseconds);
    }
}
