--TEST--
ferry: msgpack_pack() encodes like php/msgpack's Packer, hands objects to its callback and limits nesting
--EXTENSIONS--
ferry
--FILE--
<?php
require dirname(require __DIR__ . '/sdk.inc', 2) . '/msgpack/autoload.php';
use Ferry\MsgPack\MsgPackException;
use function Ferry\Ext\msgpack_pack;

function show(mixed $v, int $flags = 0, int $depth = 0, ?callable $cb = null): void
{
    try {
        echo bin2hex(msgpack_pack($v, $flags, $depth, $cb)), "\n";
    } catch (MsgPackException $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    } catch (\Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

foreach ([null, false, true, 0, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, PHP_INT_MAX,
    -1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, PHP_INT_MIN, 1.5, -0.0] as $v) {
    show($v);
}
show(''); show(str_repeat('a', 31)); show(str_repeat('a', 32)); show(strlen(msgpack_pack(str_repeat('a', 256)))); show(strlen(msgpack_pack(str_repeat('a', 65536))));
show([]); show([1, 2]); show([1 => 1]); show(['a' => [true], 7 => null]); show(range(1, 16));
show('ab', 0x01); show(['k' => 'v'], 0x01); show([1, 2], 0x08); show(['a' => 1, 'b' => 2], 0x04); show(1.5, 0x10);
show(['a' => 1], 0x20); show([1], 0x40);
$ref = 5;
show([&$ref, ['x' => &$ref]]);
// objects and resources go to the callback, with the number of open containers
show([1, [new stdClass()]], 0, 0, function (mixed $v, int $depth) {
    echo '  callback(', get_debug_type($v), ", $depth)\n";
    return "\xc0";
});
show(new stdClass(), 0, 3, fn () => throw new MsgPackException('from the callback'));
show(new stdClass(), 0, 0, fn () => 42);
show([new stdClass()]);
// nesting: 512 open containers at most, counting those the caller has open
$deep = [];
for ($i = 0; $i < 511; $i++) {
    $deep = [$deep];
}
show(strlen(msgpack_pack($deep)));
show([$deep]);
show($deep, 0, 1);
$self = [1];
$self[] = &$self;
show($self);
show(1, 0, 513);
--EXPECT--
c0
c2
c3
00
7f
cc80
ccff
cd0100
cdffff
ce00010000
ceffffffff
cf0000000100000000
cf7fffffffffffffff
ff
e0
d0df
d080
d1ff7f
d18000
d2ffff7fff
d280000000
d3ffffffff7fffffff
d38000000000000000
cb3ff8000000000000
cb8000000000000000
a0
bf61616161616161616161616161616161616161616161616161616161616161
d9206161616161616161616161616161616161616161616161616161616161616161
cd0103
ce00010005
90
920102
810101
82a16191c307c0
dc00100102030405060708090a0b0c0d0e0f10
c4026162
81c4016bc40176
8200010102
920102
ca3fc00000
9101
810001
920581a17805
  callback(stdClass, 2)
920191c0
Ferry\MsgPack\MsgPackException: MessagePack error: from the callback
TypeError: msgpack_pack(): the callback must return a string
Ferry\MsgPack\MsgPackException: MessagePack error: cannot pack a value of type stdClass (no callback)
cd0200
Ferry\MsgPack\MsgPackException: MessagePack error: nesting deeper than 512 levels (recursive array?)
Ferry\MsgPack\MsgPackException: MessagePack error: nesting deeper than 512 levels (recursive array?)
Ferry\MsgPack\MsgPackException: MessagePack error: nesting deeper than 512 levels (recursive array?)
ValueError: Ferry\Ext\msgpack_pack(): Argument #3 ($depth) must be between 0 and 512