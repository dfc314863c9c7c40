<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Codec\ExtCodec;
use Ferry\Tarantool\Exception\ProtocolException;

/** The ext-msgpack codec leaves process settings alone and takes exactly one value per message. */
final class ExtCodecTest extends TarantoolTestCase
{
    protected function setUp(): void
    {
        if (!\extension_loaded('msgpack')) {
            $this->markTestSkipped('ext-msgpack is not installed');
        }
    }

    public function testProcessWidePhpOnlySettingIsLeftAlone(): void
    {
        $before = \ini_get('msgpack.php_only');
        \ini_set('msgpack.php_only', '1');
        try {
            $codec = new ExtCodec();
            $client = $this->client(['codec' => $codec]);
            $this->assertSame([1, 'two', [3]], $client->call('multi'));
            $this->assertSame('1', \ini_get('msgpack.php_only'), 'other users of ext-msgpack keep their setting');
            // Its own packing still writes plain MessagePack (php_only would tag the class name).
            $object = new \stdClass();
            $object->a = 1;
            $this->assertSame('919101', \bin2hex($codec->pack([$object])));
            $this->assertSame('1', \ini_get('msgpack.php_only'));
        } finally {
            \ini_set('msgpack.php_only', (string) $before);
        }
    }

    public function testTrailingAndMissingBytesAreRejected(): void
    {
        $codec = new ExtCodec();
        $this->assertSame([1, 'a'], $codec->unpack("\x92\x01\xa1a"));
        $this->assertFalse($codec->unpack("\xc2"));
        foreach (["\x01\x02" => 'trailing', "\x92\x01\xa1a\xc0" => 'trailing', "\x92\x01" => 'could not decode', "\xc1" => 'could not decode'] as $bytes => $why) {
            try {
                $value = $codec->unpack($bytes);
                $this->fail(\bin2hex($bytes) . ' decoded to ' . \var_export($value, true));
            } catch (ProtocolException $e) {
                $this->assertStringContainsString($why, $e->getMessage());
            }
        }
        $this->assertSame(['ok'], $codec->unpack("\x91\xa2ok"), 'usable after a rejected message');
    }
}
