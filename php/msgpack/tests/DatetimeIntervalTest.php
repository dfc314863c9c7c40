<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Ext\Datetime;
use Ferry\MsgPack\Ext\Interval;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Tests\Support\RandomValues;
use PHPUnit\Framework\TestCase;

/**
 * Tarantool's MP_DATETIME (4) and MP_INTERVAL (6). Debian's Tarantool (2.6) predates both, so
 * the vectors come from Tarantool's documentation (doc/dev_guide/internals/msgpack_extensions.rst
 * in tarantool/doc): the interval one verbatim from its example, the datetime ones written
 * from its layout (int64 seconds, then int32 nsec, int16 tzoffset, int16 tzindex, all
 * little-endian, the tail only when one of them is not zero). The bounds are those of
 * Tarantool's datetime_validate() and interval_unpack().
 */
final class DatetimeIntervalTest extends TestCase
{
    private static function decode(string $hex): mixed
    {
        $u = new BufferUnpacker((string) hex2bin($hex), 0, Extensions::tarantool());
        $v = $u->unpack();
        self::assertFalse($u->hasRemaining());
        return $v;
    }

    private static function encode(mixed $v): string
    {
        return bin2hex((new Packer(0, Extensions::tarantool()))->pack($v));
    }

    /** @return iterable<string, array{Datetime, string, string}> value, bytes, string form */
    public static function datetimes(): iterable
    {
        yield 'epoch: 8 bytes' => [new Datetime(0), 'd7040000000000000000', '1970-01-01T00:00:00Z'];
        yield 'nsec and offset: 16 bytes' => [new Datetime(1661969274, 308543321, 180), 'd8047aa30f630000000059ff6312b4000000', '2022-08-31T21:07:54.308543321+03:00'];
        yield 'negative seconds' => [new Datetime(-1), 'd704ffffffffffffffff', '1969-12-31T23:59:59Z'];
        yield 'negative offset' => [new Datetime(1661969274, 0, -720), 'd8047aa30f63000000000000000030fd0000', '2022-08-31T06:07:54-12:00'];
        yield 'only tzindex' => [new Datetime(0, 0, 0, 1024), 'd80400000000000000000000000000000004', '1970-01-01T00:00:00Z'];
        yield 'first second' => [new Datetime(Datetime::MIN_SECONDS), 'd70480b76c883157ffff', '-5879610-06-22T00:00:00Z'];
        yield 'every field at its maximum' => [new Datetime(Datetime::MAX_SECONDS, 1999999999, 840, 1024), 'd80400666b88b1a80000ff93357748030004', '5879611-07-11T14:00:01.999999999+14:00'];
    }

    /** @dataProvider datetimes */
    public function testDatetimeVectors(Datetime $d, string $hex, string $string): void
    {
        self::assertSame($hex, self::encode($d));
        $back = self::decode($hex);
        self::assertEquals($d, $back);
        self::assertSame($string, (string) $back);
    }

    public function testA16BytePayloadWithAZeroTailDecodes(): void
    {
        // Tarantool writes 8 bytes then, but reads both.
        self::assertEquals(new Datetime(5), self::decode('d8040500000000000000' . str_repeat('00', 8)));
        self::assertEquals(new Datetime(5), self::decode('c7080405' . str_repeat('00', 7)));
    }

    /** @return iterable<string, array{string, string}> bytes, reason */
    public static function badDatetimes(): iterable
    {
        yield '4 bytes' => ['d60400000000', 'datetime payload is 4 bytes, expected 8 or 16'];
        yield '12 bytes' => ['c70c04' . str_repeat('00', 12), 'datetime payload is 12 bytes, expected 8 or 16'];
        yield 'empty' => ['c70004', 'datetime payload is 0 bytes, expected 8 or 16'];
        yield 'seconds below' => ['d7047fb76c883157ffff', 'datetime seconds -185604722870401 outside -185604722870400..185480451417600'];
        yield 'seconds above' => ['d70401666b88b1a80000', 'datetime seconds 185480451417601 outside'];
        yield 'nsec 2e9' => ['d804' . str_repeat('00', 8) . '0094357700000000', 'datetime nanoseconds 2000000000 outside 0..1999999999'];
        yield 'nsec negative' => ['d804' . str_repeat('00', 8) . 'ffffffff00000000', 'datetime nanoseconds -1 outside'];
        yield 'tzoffset 841' => ['d804' . str_repeat('00', 8) . '0000000049030000', 'datetime tzoffset 841 outside -720..840 minutes'];
        yield 'tzoffset -721' => ['d804' . str_repeat('00', 8) . '000000002ffd0000', 'datetime tzoffset -721 outside'];
        yield 'tzindex 1025' => ['d804' . str_repeat('00', 8) . '0000000000000104', 'datetime tzindex 1025 outside 0..1024'];
        yield 'tzindex -1' => ['d804' . str_repeat('00', 8) . '000000000000ffff', 'datetime tzindex -1 outside'];
    }

    /** @dataProvider badDatetimes */
    public function testBadDatetimesAreRejected(string $hex, string $reason): void
    {
        $this->expectException(MsgPackException::class);
        $this->expectExceptionMessage($reason);
        self::decode($hex);
    }

    public function testDatetimeConstructorChecksTheSameBounds(): void
    {
        foreach ([[Datetime::MAX_SECONDS + 1, 0, 0, 0], [0, -1, 0, 0], [0, 2_000_000_000, 0, 0], [0, 0, 841, 0], [0, 0, -721, 0], [0, 0, 0, 1025], [0, 0, 0, -1]] as $args) {
            try {
                new Datetime(...$args);
                self::fail('accepted ' . json_encode($args));
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testDatetimeConversions(): void
    {
        $php = new \DateTimeImmutable('2022-08-31T21:07:54.308543+03:00');
        $d = Datetime::fromDateTime($php);
        self::assertEquals(new Datetime(1661969274, 308543000, 180), $d);
        self::assertEquals($php, $d->toDateTime());
        self::assertSame('+03:00', $d->toDateTime()->getTimezone()->getName());
        // a zone name keeps its offset at that instant, not the name
        $ny = Datetime::fromDateTime(new \DateTimeImmutable('2022-01-15 12:00', new \DateTimeZone('America/New_York')));
        self::assertSame(-300, $ny->tzoffset);
        self::assertSame(0, $ny->tzindex);
        // nanoseconds are truncated to PHP's microseconds, towards the past also before 1970
        self::assertSame('1969-12-31T23:59:59.999999+00:00', (new Datetime(-1, 999999999))->toDateTime()->format('Y-m-d\TH:i:s.uP'));
        // a leap second (nsec >= 1e9) is the next second's instant
        self::assertSame(1, (new Datetime(0, 1_000_000_001))->toDateTime()->getTimestamp());
        $this->expectException(\InvalidArgumentException::class);
        Datetime::fromDateTime(new \DateTimeImmutable('1800-01-01', new \DateTimeZone('Europe/Amsterdam'))); // +00:19:32
    }

    public function testIntervalVectorFromTarantoolsDocumentation(): void
    {
        // datetime.interval.new{year = 1, month = 200, day = -77} in Tarantool's docs (adjust 'none' by default).
        $i = new Interval(year: 1, month: 200, day: -77);
        self::assertSame('c70b0604000101ccc803d0b30801', self::encode($i));
        self::assertEquals($i, self::decode('c70b0604000101ccc803d0b30801'));
    }

    /** @return iterable<string, array{Interval, string}> */
    public static function intervals(): iterable
    {
        yield 'nothing, adjust excess: count 0' => [new Interval(adjust: Interval::ADJUST_EXCESS), 'd40600'];
        yield 'nothing, adjust none' => [new Interval(), 'c703060108' . '01'];
        yield 'every field' => [new Interval(-1, 2, -3, 4, -5, 6, -7, 999999999, Interval::ADJUST_LAST),
            'c7170609' . '00ff' . '0102' . '02fd' . '0304' . '04fb' . '0506' . '06f9' . '07ce3b9ac9ff' . '0802'];
        yield 'int32 and int64 extremes' => [new Interval(year: -2147483648, week: 2147483647, second: PHP_INT_MIN, adjust: 0),
            'c7170603' . '00d280000000' . '02ce7fffffff' . '06d38000000000000000'];
    }

    /** @dataProvider intervals */
    public function testIntervalVectors(Interval $i, string $hex): void
    {
        self::assertSame($hex, self::encode($i));
        self::assertEquals($i, self::decode($hex));
    }

    public function testIntervalFieldsInAnyOrderAndWidthDecode(): void
    {
        // Tarantool writes ids in order and ints minimally; it reads any order and width.
        self::assertEquals(new Interval(day: 5, year: 7, adjust: 0), self::decode('c70e0602' . '03d30000000000000005' . '00cc07'));
        self::assertEquals(new Interval(hour: 0, adjust: 0), self::decode('c703060104' . '00')); // a zero that was written anyway
    }

    /** @return iterable<string, array{string, string}> */
    public static function badIntervals(): iterable
    {
        yield 'empty payload' => ['c70006', 'ext type 6 payload ends early'];
        yield 'count beyond the payload' => ['d5060100', 'ext type 6 payload ends early'];
        yield 'unknown field id' => ['c7030601' . '0901', 'interval field id 9 is unknown (0..8)'];
        yield 'field id as a msgpack int' => ['c7040601cc0101', 'interval field id 204 is unknown'];
        yield 'duplicate field' => ['c7050602' . '0001' . '0002', 'interval field year appears twice'];
        yield 'value not an int' => ['c7030601' . '00c0', 'expected int, got type byte 0xc0'];
        yield 'value a string' => ['c70406' . '0100a178', 'expected int, got type byte 0xa1'];
        yield 'year above int32' => ['c7070601' . '00ce80000000', 'interval year 2147483648 is out of range'];
        yield 'nsec below int32' => ['c70b0601' . '07d3ffffffff7fffffff', 'interval nanosecond -2147483649 is out of range'];
        yield 'adjust 3' => ['c7030601' . '0803', 'interval adjust 3 is out of range'];
        yield 'adjust -1' => ['c7030601' . '08ff', 'interval adjust -1 is out of range'];
        yield 'day beyond int64' => ['c70b0601' . '03cfffffffffffffffff', 'does not fit in a PHP int'];
        yield 'trailing bytes' => ['d6060000' . '0000', 'ext type 6 payload has trailing bytes'];
    }

    /** @dataProvider badIntervals */
    public function testBadIntervalsAreRejected(string $hex, string $reason): void
    {
        $this->expectException(MsgPackException::class);
        $this->expectExceptionMessage($reason);
        self::decode($hex);
    }

    public function testIntervalConstructorChecksRanges(): void
    {
        foreach ([['year' => 2147483648], ['month' => -2147483649], ['week' => 1 << 40], ['nanosecond' => 1 << 31], ['adjust' => 3], ['adjust' => -1]] as $args) {
            try {
                new Interval(...$args);
                self::fail('accepted ' . json_encode($args));
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testIntervalConversions(): void
    {
        $i = new Interval(year: 1, month: 1, week: 1, day: -3, hour: 4, minute: 5, second: 6, nanosecond: 7_000_999);
        $php = $i->toDateInterval();
        self::assertSame([1, 1, 4, 4, 5, 6, 0.007], [$php->y, $php->m, $php->d, $php->h, $php->i, $php->s, $php->f]);
        $start = new \DateTimeImmutable('2020-01-31T00:00:00Z');
        self::assertSame('2021-03-07T04:05:06.007000+00:00', $start->add($php)->format('Y-m-d\TH:i:s.uP')); // 2021-02-31 overflows to 03-03: ADJUST_EXCESS
        $php = new \DateInterval('P1Y1M14DT14H');
        $php->invert = 1;
        $php->f = 0.25;
        $back = Interval::fromDateInterval($php);
        self::assertEquals(new Interval(year: -1, month: -1, day: -14, hour: -14, nanosecond: -250_000_000, adjust: Interval::ADJUST_EXCESS), $back);
        $this->expectException(\RangeException::class);
        (new Interval(week: 2147483647, day: PHP_INT_MAX))->toDateInterval();
    }

    public function testRandomValuesRoundTrip(): void
    {
        $g = new RandomValues($seed = RandomValues::seed());
        $p = new Packer(0, Extensions::tarantool());
        $u = new BufferUnpacker('', 0, Extensions::tarantool());
        for ($k = 0; $k < 3000; ++$k) {
            $v = $k % 2 === 0 ? $g->datetime() : $g->interval();
            $bytes = $p->pack($v);
            self::assertEquals($v, $u->unpackMessage($bytes), "seed $seed, value $k: " . bin2hex($bytes));
            self::assertLessThanOrEqual($v instanceof Datetime ? 18 : 2 + 1 + 9 + 9 * 9, strlen($bytes));
        }
    }
}
