--TEST--
ferry: msgpack_unpack_message() is BufferUnpacker::unpackMessage() with its state; it refuses other objects and unpackers that run pure PHP
--EXTENSIONS--
ferry
--FILE--
<?php
require dirname(require __DIR__ . '/sdk.inc', 2) . '/msgpack/autoload.php';
use Ferry\MsgPack\{BufferUnpacker, Extensions, MsgPackException, InsufficientData};
use function Ferry\Ext\msgpack_unpack_message;

$u = new BufferUnpacker('', 0, Extensions::tarantool());
$state = fn () => sprintf('position %d, remaining %d, missing %d', $u->position(), $u->remaining(), $u->missing());
$v = msgpack_unpack_message($u, hex2bin('84000001ce0001e24005503092d7040000000000000000c70b0604000101ccc803d0b30801'));
echo json_encode([$v[1], array_map('get_class', $v[0x30])]), ' | ', $state(), "\n";
foreach (['9201', '920102ff', 'c1', 'd60400000000', '91' . str_repeat('91', 600) . '01'] as $hex) {
    try {
        msgpack_unpack_message($u, hex2bin($hex));
    } catch (MsgPackException $e) {
        echo get_class($e), ': ', $e->getMessage(), ' | ', $state(), "\n";
    }
}
echo json_encode(msgpack_unpack_message($u, "\x93\x01\xa1a\xc0")), ' | ', $state(), "\n";
try {
    msgpack_unpack_message(new ArrayObject(), "\x01");
} catch (Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
ini_set('ferry.msgpack_php_only', '1');
$pure = new BufferUnpacker();
try {
    msgpack_unpack_message($pure, "\x01");
} catch (Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
var_dump($pure->unpackMessage("\x01"));
?>
--EXPECT--
[123456,["Ferry\\MsgPack\\Ext\\Datetime","Ferry\\MsgPack\\Ext\\Interval"]] | position 37, remaining 0, missing 1
Ferry\MsgPack\InsufficientData: MessagePack error at offset 1: truncated array of 2 elements: 1 more bytes needed | position 0, remaining 2, missing 1
Ferry\MsgPack\MsgPackException: MessagePack error at offset 3: 1 trailing bytes after the value | position 0, remaining 0, missing 1
Ferry\MsgPack\MsgPackException: MessagePack error at offset 0: invalid type byte 0xc1 (never used) | position 0, remaining 1, missing 0
Ferry\MsgPack\MsgPackException: MessagePack error at offset 2: datetime payload is 4 bytes, expected 8 or 16 | position 0, remaining 6, missing 0
Ferry\MsgPack\MsgPackException: MessagePack error at offset 512: nesting deeper than 512 levels | position 0, remaining 602, missing 0
[1,"a",null] | position 5, remaining 0, missing 1
Error: Ferry\Ext\msgpack_unpack_message(): ArrayObject is not php/msgpack's BufferUnpacker this extension was built for
Error: Ferry\Ext\msgpack_unpack_message(): this unpacker does not run the C codec
int(1)
