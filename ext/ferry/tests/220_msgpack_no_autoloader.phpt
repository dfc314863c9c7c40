--TEST--
ferry: without php/msgpack's classes the msgpack functions fail with a clear Error, not a crash
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{msgpack_pack, msgpack_unpack};

$off = 0;
var_dump(msgpack_unpack("\x92\x01\xa1x", $off, 4), $off);
var_dump(bin2hex(msgpack_pack([1, 'x'])));
foreach (["\xd4\x01\x00", "\xc1", "\x92"] as $bytes) {
    try {
        $off = 0;
        msgpack_unpack($bytes, $off, strlen($bytes));
    } catch (\Error $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
try {
    msgpack_pack(new stdClass());
} catch (\Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
?>
--EXPECT--
array(2) {
  [0]=>
  int(1)
  [1]=>
  string(1) "x"
}
int(4)
string(8) "9201a178"
Error: Class Ferry\MsgPack\Ext\RawExt not found (php/msgpack's autoloader is not registered)
Error: Class Ferry\MsgPack\MsgPackException not found (php/msgpack's autoloader is not registered)
Error: Class Ferry\MsgPack\InsufficientData not found (php/msgpack's autoloader is not registered)
Error: Class Ferry\MsgPack\MsgPackException not found (php/msgpack's autoloader is not registered)