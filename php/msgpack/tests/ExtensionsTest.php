<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Ext\BoxError;
use Ferry\MsgPack\Ext\Decimal;
use Ferry\MsgPack\Ext\ErrorStack;
use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Ext\Timestamp;
use Ferry\MsgPack\Ext\Uuid;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Packer;
use PHPUnit\Framework\TestCase;

final class ExtensionsTest extends TestCase
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

    /** @return iterable<string, array{string, string, string}> input, MP_DECIMAL bytes, string form */
    public static function decimals(): iterable
    {
        // Layouts from Tarantool's MP_DECIMAL description (scale as msgpack int, BCD, sign nibble).
        yield '-12.34' => ['-12.34', 'd6010201234d', '-12.34'];
        yield 'scale 36' => ['0.000000000000000000000000000000000010', 'c7030124010c', '0.000000000000000000000000000000000010'];
        yield 'zero' => ['0', 'd501000c', '0'];
        yield 'one' => ['1', 'd501001c', '1'];
        yield 'even digit count gets a 0 nibble' => ['12', 'c7030100012c', '12'];
        yield 'negative scale' => ['1e10', 'd501f61c', '10000000000'];
        yield 'trailing zeros kept' => ['100.500', 'c70501030100500c', '100.500'];
        yield '38 digits' => ['12345678901234567890123456789012345678', 'c7150100012345678901234567890123456789012345678c', '12345678901234567890123456789012345678'];
        yield '-38 digits, scale 38' => ['-.' . str_repeat('9', 38), 'c7150126' . '0' . str_repeat('9', 38) . 'd', '-0.' . str_repeat('9', 38)];
    }

    /** @dataProvider decimals */
    public function testDecimalVectors(string $input, string $hex, string $string): void
    {
        $d = Decimal::fromString($input);
        self::assertSame($string, (string) $d);
        self::assertSame($hex, self::encode($d));
        $back = self::decode($hex);
        self::assertInstanceOf(Decimal::class, $back);
        self::assertSame($string, (string) $back);
        self::assertTrue($back->equals($d));
    }

    public function testDecimalSignNibbles(): void
    {
        foreach (['a' => '5', 'c' => '5', 'e' => '5', 'f' => '5', 'b' => '-5', 'd' => '-5'] as $nibble => $want) {
            self::assertSame($want, (string) self::decode("d50100" . "5$nibble"));
        }
        foreach (['5', '0', '9'] as $nibble) {
            try {
                self::decode("d50100" . "5$nibble");
                self::fail("sign nibble $nibble accepted");
            } catch (MsgPackException $e) {
                self::assertStringContainsString('sign nibble', $e->getMessage());
            }
        }
        $this->expectExceptionMessage('non-digit nibble');
        self::decode('d6010001ac0c');
    }

    public function testDecimalLimits(): void
    {
        // 39 digits is beyond Tarantool's decimal precision.
        $this->assertDecodeFails('c7150100' . str_repeat('11', 19) . '1c', 'more than 38');
        $this->assertDecodeFails('d40100', 'no BCD digits');
        $this->assertDecodeFails('d501cd0001', 'ends early');
        $this->assertDecodeFails('d601cd2710' . '1c', 'scale 10000 outside');
        self::assertSame('-0.5', (string) Decimal::fromString('-.5'));
        self::assertSame('2500000000', (string) Decimal::fromString('2.5E+9'));
        self::assertSame('0.0025', (string) Decimal::fromString('2.5e-3'));
        self::assertSame('0.000', (string) Decimal::fromString('-0.000'), 'zero is not negative; scale kept');
        self::assertSame('7', (string) Decimal::fromInt(7));
        self::assertSame('-9223372036854775808', (string) Decimal::fromInt(PHP_INT_MIN));
        self::assertTrue(Decimal::fromString('1.10')->equals(Decimal::fromString('1.1')));
        self::assertFalse(Decimal::fromString('1.10')->equals(Decimal::fromString('-1.1')));
        foreach (['', '.', '-', '1.2.3', 'abc', '1e', ' 1', '1_000', 'NaN', '+-1'] as $bad) {
            try {
                Decimal::fromString($bad);
                self::fail("accepted \"$bad\"");
            } catch (\InvalidArgumentException) {
                self::assertTrue(true);
            }
        }
    }

    public function testUuid(): void
    {
        $s = 'c8f0fa1f-da29-438c-a040-393f1126ad39';
        $u = Uuid::fromString(strtoupper($s));
        self::assertSame($s, (string) $u);
        self::assertSame('d802' . 'c8f0fa1fda29438ca040393f1126ad39', self::encode($u));
        $back = self::decode('d802c8f0fa1fda29438ca040393f1126ad39');
        self::assertInstanceOf(Uuid::class, $back);
        self::assertTrue($back->equals($u));
        $v4 = Uuid::v4();
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', (string) $v4);
        $this->assertDecodeFails('c70f02' . str_repeat('00', 15), 'uuid payload is 15 bytes');
        $this->expectException(\InvalidArgumentException::class);
        Uuid::fromString('c8f0fa1f-da29-438c-a040-393f1126ad3');
    }

    public function testTimestamp(): void
    {
        $t = new Timestamp(1514862245, 678901234);
        self::assertSame('d7ffa1dcd7c85a4af6a5', self::encode($t));
        self::assertSame('2018-01-02 03:04:05.678901', $t->toDateTime()->format('Y-m-d H:i:s.u'));
        $dt = new \DateTimeImmutable('1969-12-31 23:59:59.5 UTC');
        $ts = Timestamp::fromDateTime($dt);
        self::assertSame([-1, 500000000], [$ts->seconds, $ts->nanoseconds]);
        self::assertSame('c70cff' . '1dcd6500' . 'ffffffffffffffff', self::encode($ts));
        self::assertEquals($ts, self::decode(self::encode($ts)));
        self::assertSame('-0.500000000', (string) $ts);
        $this->assertDecodeFails('d7ff' . 'fffffffc' . '00000000', 'nanoseconds');
        $this->expectException(\InvalidArgumentException::class);
        new Timestamp(0, 1_000_000_000);
    }

    public function testTimestampStringOfNegativeFractions(): void
    {
        $cases = [
            '-0.999999995' => [-1, 5], '-0.000000001' => [-1, 999_999_999], '-1.000000000' => [-1, 0],
            '-1.250000000' => [-2, 750_000_000], '0.000000005' => [0, 5], '12.000000001' => [12, 1],
        ];
        foreach ($cases as $string => [$s, $ns]) {
            $t = new Timestamp($s, $ns);
            self::assertSame($string, (string) $t, "$s s + $ns ns");
            // The string is the exact value: seconds + ns / 1e9, checked in integer nanoseconds.
            [$int, $frac] = explode('.', ltrim($string, '-'));
            $sign = $string[0] === '-' ? -1 : 1;
            self::assertSame($s * 1_000_000_000 + $ns, $sign * ((int) $int * 1_000_000_000 + (int) $frac));
        }
    }

    public function testErrorStackAsTarantoolSendsIt(): void
    {
        // MP_ERROR: {0x00: [{0x00 type, 0x01 file, 0x02 line, 0x03 message, 0x04 errno, 0x05 code,
        // 0x06 fields}, ...]}, plus an unknown key 0x07 a newer server might add.
        $p = new Packer();
        $entry = static fn (string $type, string $msg, int $code, array $fields) => "\x88"
            . "\x00" . $p->packStr($type) . "\x01" . $p->packStr('box.cc') . "\x02" . $p->packInt(1234)
            . "\x03" . $p->packStr($msg) . "\x04" . "\x00" . "\x05" . $p->packInt($code)
            . "\x06" . $p->pack($fields) . "\x07" . "\xc0";
        $payload = "\x81\x00\x92" . $entry('AccessDeniedError', 'Read access denied', 42,
            ['object_type' => 'space', 'object_name' => 'tester']) . $entry('ClientError', 'cause', 1, []);
        $bytes = $p->packExt(3, $payload);
        $v = (new BufferUnpacker($bytes, 0, Extensions::tarantool()))->unpack();
        self::assertInstanceOf(ErrorStack::class, $v);
        self::assertCount(2, $v);
        $e = $v->first();
        self::assertSame(['AccessDeniedError', 'Read access denied', 42, 'box.cc', 1234, 0],
            [$e->type, $e->message, $e->code, $e->file, $e->line, $e->errno]);
        self::assertSame(['object_type' => 'space', 'object_name' => 'tester'], $e->fields);
        self::assertSame('ClientError', $v->errors[1]->type);
        self::assertSame('AccessDeniedError: Read access denied (code 42) <- ClientError: cause (code 1)', (string) $v);
        // Round trip through our own packer (fields always written, unknown key dropped).
        self::assertEquals($v, self::decode(self::encode($v)));
        self::assertInstanceOf(RawExt::class, (new BufferUnpacker($bytes))->unpack(), 'not decoded unless registered');
    }

    public function testErrorStackVectorFromTarantool26(): void
    {
        // msgpack.encode() of box.error.new({code = 42, reason = 'boom', type = 'MyError'}) with
        // set_prev(box.error.new({code = 7, reason = 'cause'})), error_marshaling_enabled, 2.6.0.
        $v = self::decode('c75e038100928700ab437573746f6d4572726f72020301a674322e6c756103a4626f6f6d0400052a06'
            . '81ab637573746f6d5f74797065a74d794572726f728600ab436c69656e744572726f72020401a674322e6c756103'
            . 'a5636175736504000507');
        self::assertInstanceOf(ErrorStack::class, $v);
        self::assertEquals(new ErrorStack(
            new BoxError('CustomError', 'boom', 42, 't2.lua', 3, 0, ['custom_type' => 'MyError']),
            new BoxError('ClientError', 'cause', 7, 't2.lua', 4, 0, []),
        ), $v);
    }

    public function testMalformedErrorStacks(): void
    {
        $p = new Packer();
        $cases = [
            'not a map' => [$p->pack([1]), 'stack array at key 0'],
            'empty stack' => [$p->pack(new \Ferry\MsgPack\Type\Map([0 => []])), 'empty'],
            'entry not a map' => [$p->pack(new \Ferry\MsgPack\Type\Map([0 => [5]])), 'entry 0 is not a map'],
            'message not a string' => [$p->pack(new \Ferry\MsgPack\Type\Map([0 => [[3 => 5]]])), 'key 3 must be a string'],
            'code not an int' => [$p->pack(new \Ferry\MsgPack\Type\Map([0 => [[5 => 'x']]])), 'key 5 must be an integer'],
            'fields not a map' => [$p->pack(new \Ferry\MsgPack\Type\Map([0 => [[6 => 'x']]])), 'fields must be a map'],
            'truncated' => [substr($p->pack(new \Ferry\MsgPack\Type\Map([0 => [[3 => 'message']]])), 0, -2), 'ends early'],
        ];
        foreach ($cases as $what => [$payload, $reason]) {
            $this->assertDecodeFails(bin2hex($p->packExt(3, $payload)), $reason);
        }
        $this->expectException(\InvalidArgumentException::class);
        new ErrorStack();
    }

    private function assertDecodeFails(string $hex, string $reason): void
    {
        try {
            self::decode($hex);
            self::fail("decoded $hex");
        } catch (MsgPackException $e) {
            self::assertStringContainsString($reason, $e->getMessage(), $hex);
            self::assertGreaterThanOrEqual(0, $e->getOffset(), 'decode errors carry an offset');
        }
    }
}
