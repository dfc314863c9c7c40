<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * Tarantool's datetime.interval (MP_INTERVAL, 2.10+): a period kept as separate calendar
 * and clock components, each with its own sign, as Tarantool keeps them (1 month is not
 * a number of days until it is added to a date), plus the month-end $adjust mode.
 *
 * Bounds are those of the wire format as Tarantool reads it: $year, $month, $week and
 * $nanosecond are int32, $day, $hour, $minute and $second int64 (any PHP int), $adjust one of
 * the ADJUST_* constants. Tarantool's own datetime arithmetic accepts less (e.g. years within
 * ±11 759 221) and says so when the interval is used, not when it is decoded.
 */
final class Interval
{
    /** Tarantool's adjust modes (its Lua names 'excess', 'none', 'last'): what adding months to the 31st does. */
    public const ADJUST_EXCESS = 0; // overflow into the next month, as PHP's DateTime::add() does
    public const ADJUST_NONE = 1;   // Tarantool's default: stop at the last day of the month
    public const ADJUST_LAST = 2;   // snap to the last day of the month when starting from one

    public function __construct(
        public readonly int $year = 0,
        public readonly int $month = 0,
        public readonly int $week = 0,
        public readonly int $day = 0,
        public readonly int $hour = 0,
        public readonly int $minute = 0,
        public readonly int $second = 0,
        public readonly int $nanosecond = 0,
        public readonly int $adjust = self::ADJUST_NONE,
    ) {
        foreach (['year' => $year, 'month' => $month, 'week' => $week, 'nanosecond' => $nanosecond] as $name => $v) {
            if ($v < -0x80000000 || $v > 0x7fffffff) {
                throw new \InvalidArgumentException("interval $name $v does not fit in int32");
            }
        }
        if ($adjust < self::ADJUST_EXCESS || $adjust > self::ADJUST_LAST) {
            throw new \InvalidArgumentException("interval adjust $adjust is not 0 (excess), 1 (none) or 2 (last)");
        }
    }

    /**
     * $i's components (weeks stay 0, days are $i->d, not the $i->days of a diff()); all
     * negated when $i->invert is set; the fraction in microseconds, as PHP keeps it. Adjust
     * is ADJUST_EXCESS, which is how PHP adds months.
     */
    public static function fromDateInterval(\DateInterval $i): self
    {
        $sign = $i->invert ? -1 : 1;
        return new self(
            $sign * $i->y, $sign * $i->m, 0, $sign * $i->d, $sign * $i->h, $sign * $i->i, $sign * $i->s,
            $sign * (int) \round($i->f * 1e6) * 1000, self::ADJUST_EXCESS,
        );
    }

    /**
     * The same components as a \DateInterval for DateTime::add()/sub(): weeks become 7 days
     * each, nanoseconds a fraction of microseconds (truncated towards zero); components keep
     * their own signs (invert stays 0). PHP adds months as ADJUST_EXCESS does whatever
     * $adjust says; \RangeException when weeks and days overflow an int.
     */
    public function toDateInterval(): \DateInterval
    {
        $days = $this->week * 7 + $this->day;
        if (!\is_int($days)) {
            throw new \RangeException('interval weeks and days overflow a PHP int');
        }
        $i = new \DateInterval('PT0S');
        $i->y = $this->year;
        $i->m = $this->month;
        $i->d = $days;
        $i->h = $this->hour;
        $i->i = $this->minute;
        $i->s = $this->second;
        $i->f = intdiv($this->nanosecond, 1000) / 1e6;
        return $i;
    }
}
