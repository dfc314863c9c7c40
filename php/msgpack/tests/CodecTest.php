<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Tests;

use Ferry\MsgPack\Codec;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Ext\Decimal;
use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Ext\Timestamp;
use Ferry\MsgPack\ExtMsgpackCodec;
use Ferry\MsgPack\InsufficientData;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\PureCodec;
use Ferry\MsgPack\Tests\Support\RandomValues;
use Ferry\MsgPack\Type\Map;
use PHPUnit\Framework\TestCase;

final class CodecTest extends TestCase
{
    /** @return iterable<string, array{Codec}> */
    public static function codecs(): iterable
    {
        yield 'pure' => [new PureCodec(0, Extensions::tarantool())];
        if (\extension_loaded('msgpack')) {
            // A low threshold so that small test messages exercise the ext-msgpack path too.
            yield 'ext' => [new ExtMsgpackCodec(Extensions::tarantool(), 0)];
        }
    }

    /** @dataProvider codecs */
    public function testWholeMessages(Codec $c): void
    {
        $v = ['a' => [1, 2.5, null, 'x'], 'ts' => new Timestamp(5), 'd' => Decimal::fromString('1.5'), 'm' => new Map([])];
        self::assertEquals($v['a'], $c->unpack($c->pack($v['a'])));
        $back = $c->unpack($c->pack($v));
        self::assertEquals(['a' => [1, 2.5, null, 'x'], 'ts' => new Timestamp(5), 'd' => Decimal::fromString('1.5'), 'm' => []], $back);
        self::assertEquals(new RawExt(9, 'z'), $c->unpack("\xd4\x09z"));
    }

    /** @dataProvider codecs */
    public function testBadMessagesRaiseThePureExceptions(Codec $c): void
    {
        try {
            $c->unpack("\x92\x01");
            self::fail('truncated message accepted');
        } catch (InsufficientData $e) {
            self::assertSame(1, $e->getOffset(), 'where the missing elements start');
        }
        try {
            $c->unpack("\x01\x02\x03");
            self::fail('trailing bytes accepted');
        } catch (MsgPackException $e) {
            self::assertSame('MessagePack error at offset 1: 2 trailing bytes after the value', $e->getMessage());
        }
        try {
            $c->unpack("\x91\xc1");
            self::fail('0xc1 accepted');
        } catch (MsgPackException $e) {
            self::assertSame(1, $e->getOffset());
        }
        // ext-msgpack in php_only mode would build a stdClass from this map; we must not.
        self::assertSame(['a' => 1, 'b' => 'stdClass'], $c->unpack("\x82\xa1a\x01\xa1b\xa8stdClass"));
    }

    public function testExtCodecMatchesPureOnRandomPlainData(): void
    {
        if (!\extension_loaded('msgpack')) {
            self::markTestSkipped('ext-msgpack not loaded');
        }
        $g = new RandomValues($seed = RandomValues::seed());
        $pure = new PureCodec(0, Extensions::tarantool(), ExtMsgpackCodec::MAX_DEPTH);
        $ext = new ExtMsgpackCodec(Extensions::tarantool(), 0);
        for ($i = 0; $i < 500; ++$i) {
            $v = $g->value(0, $i % 2 === 0);
            $bytes = $pure->pack($v);
            self::assertSame($bytes, $ext->pack($v), "seed=$seed value #$i");
            self::assertSame(serialize($pure->unpack($bytes)), serialize($ext->unpack($bytes)), "seed=$seed value #$i");
        }
    }

    public function testExtCodecFallsBackWhereExtMsgpackDiffers(): void
    {
        if (!\extension_loaded('msgpack')) {
            self::markTestSkipped('ext-msgpack not loaded');
        }
        $ext = new ExtMsgpackCodec(Extensions::tarantool(), 0);
        self::assertEquals([new RawExt(9, 'z'), 1], $ext->unpack("\x92\xd4\x09z\x01"), 'ext-msgpack yields null');
        self::assertEquals(new Timestamp(1), $ext->unpack("\xd6\xff\x00\x00\x00\x01"));
        self::assertSame(1.5, $ext->unpack("\xca\x3f\xc0\x00\x00"), 'float32');
        self::assertSame(['a' => 2], $ext->unpack("\x82\xa1a\x01\xa1a\x02"), 'duplicate keys');
        self::assertSame(5, $ext->unpack("\xd3\0\0\0\0\0\0\0\x05"), 'non-minimal width');
        foreach (["\x81\xc0\x01" => 'nil', "\x81\xc3\x01" => 'bool', "\x81\xcb\x3f\xf0\0\0\0\0\0\0\x01" => 'float'] as $bytes => $what) {
            try {
                $ext->unpack($bytes);
                self::fail("$what map key accepted");
            } catch (MsgPackException $e) {
                self::assertStringContainsString('map key of type', $e->getMessage());
            }
        }
        self::assertIsArray($ext->unpack(str_repeat("\x91", 1024) . "\x01"));
        $this->expectExceptionMessage('nesting deeper than 1024');
        $ext->unpack(str_repeat("\x91", 1025) . "\x01");
    }

    public function testExtCodecRejectsWhatThePackerRejects(): void
    {
        if (!\extension_loaded('msgpack')) {
            self::markTestSkipped('ext-msgpack not loaded');
        }
        $deep = [1];
        for ($i = 0; $i < 512; ++$i) {
            $deep = [$deep];
        }
        $this->expectException(MsgPackException::class);
        (new ExtMsgpackCodec())->pack($deep);
    }
}
