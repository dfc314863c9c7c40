<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * Tarantool's datetime (MP_DATETIME, 2.10+): an instant, $seconds since the Unix epoch plus
 * $nanoseconds, with the UTC offset ($tzoffset, minutes) and Olson zone index ($tzindex, an
 * index into Tarantool's own zone table; 0 = none) it was made with. The instant does not
 * depend on the zone fields: they say how Tarantool displays it.
 *
 * The bounds are the ones Tarantool checks when it decodes a datetime, so every value it
 * accepts can be held here and nothing else can. $nanoseconds may reach 1 999 999 999 as
 * Tarantool allows (a second past 59, e.g. a parsed leap second "23:59:60").
 */
final class Datetime implements \Stringable
{
    /** Tarantool's c-dt day numbers are C ints: INT_MIN/INT_MAX days from 0001-01-01, in epoch seconds. */
    public const MIN_SECONDS = -185604722870400;
    public const MAX_SECONDS = 185480451417600;
    public const MAX_NANOSECONDS = 1999999999;
    /** UTC-12:00 .. UTC+14:00, in minutes. */
    public const MIN_TZOFFSET = -720;
    public const MAX_TZOFFSET = 840;
    public const MAX_TZINDEX = 1024;

    public function __construct(
        public readonly int $seconds,
        public readonly int $nanoseconds = 0,
        public readonly int $tzoffset = 0,
        public readonly int $tzindex = 0,
    ) {
        $problem = self::check($seconds, $nanoseconds, $tzoffset, $tzindex);
        if ($problem !== null) {
            throw new \InvalidArgumentException($problem);
        }
    }

    /** Why these fields are not a datetime Tarantool accepts, or null. */
    public static function check(int $seconds, int $nanoseconds, int $tzoffset, int $tzindex): ?string
    {
        if ($seconds < self::MIN_SECONDS || $seconds > self::MAX_SECONDS) {
            return "datetime seconds $seconds outside " . self::MIN_SECONDS . '..' . self::MAX_SECONDS;
        }
        if ($nanoseconds < 0 || $nanoseconds > self::MAX_NANOSECONDS) {
            return "datetime nanoseconds $nanoseconds outside 0.." . self::MAX_NANOSECONDS;
        }
        if ($tzoffset < self::MIN_TZOFFSET || $tzoffset > self::MAX_TZOFFSET) {
            return "datetime tzoffset $tzoffset outside " . self::MIN_TZOFFSET . '..' . self::MAX_TZOFFSET . ' minutes';
        }
        if ($tzindex < 0 || $tzindex > self::MAX_TZINDEX) {
            return "datetime tzindex $tzindex outside 0.." . self::MAX_TZINDEX;
        }
        return null;
    }

    /**
     * The instant of $dt (microseconds: all PHP keeps) with its UTC offset at that instant. The
     * zone name is not kept ($tzindex 0): Tarantool's zone indexes are its own numbering.
     * An offset that is not whole minutes (old local mean times) or beyond UTC-12..UTC+14
     * raises \InvalidArgumentException.
     */
    public static function fromDateTime(\DateTimeInterface $dt): self
    {
        $offset = $dt->getOffset();
        if ($offset % 60 !== 0) {
            throw new \InvalidArgumentException("UTC offset of $offset seconds is not a whole number of minutes");
        }
        return new self($dt->getTimestamp(), (int) $dt->format('u') * 1000, intdiv($offset, 60));
    }

    /**
     * The instant at the fixed offset $tzoffset ("+03:00"), microseconds truncated from the
     * nanoseconds. $tzindex is not mapped to a zone name, so DST rules of the original zone
     * do not follow the value; the offset is the one it had at this instant.
     */
    public function toDateTime(): \DateTimeImmutable
    {
        $s = $this->seconds + intdiv($this->nanoseconds, 1_000_000_000);
        $us = intdiv($this->nanoseconds % 1_000_000_000, 1000);
        $dt = new \DateTimeImmutable('@' . $s); // UTC, where setTime() cannot cross a DST change
        return $dt->setTime((int) $dt->format('G'), (int) $dt->format('i'), (int) $dt->format('s'), $us)
            ->setTimezone(new \DateTimeZone(self::offsetString($this->tzoffset)));
    }

    /** RFC 3339 at $tzoffset with the nanoseconds when there are any: "2022-08-31T18:07:54.308543321+03:00". */
    public function __toString(): string
    {
        $dt = $this->toDateTime();
        $ns = $this->nanoseconds % 1_000_000_000;
        return $dt->format('Y-m-d\TH:i:s') . ($ns !== 0 ? \sprintf('.%09d', $ns) : '')
            . ($this->tzoffset === 0 ? 'Z' : self::offsetString($this->tzoffset));
    }

    private static function offsetString(int $minutes): string
    {
        $a = \abs($minutes);
        return \sprintf('%s%02d:%02d', $minutes < 0 ? '-' : '+', intdiv($a, 60), $a % 60);
    }
}
