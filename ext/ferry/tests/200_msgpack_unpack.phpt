--TEST--
ferry: msgpack_unpack() decodes like php/msgpack's BufferUnpacker, checks every length and its arguments
--EXTENSIONS--
ferry
--FILE--
<?php
require dirname(require __DIR__ . '/sdk.inc', 2) . '/msgpack/autoload.php';
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\InsufficientData;
use function Ferry\Ext\msgpack_unpack;

function show(string $hex, int $flags = 0, int $depth = 512, ?array $exts = null, ?callable $cb = null, int $base = 0): void
{
    $bin = hex2bin($hex);
    $off = 0;
    try {
        $v = msgpack_unpack($bin, $off, strlen($bin), $base, $flags, $depth, $exts ?? [], $cb);
        echo "$hex => ", addcslashes(str_replace("\n", "", var_export($v, true)), "\0..\37\177..\377"), " (offset $off)\n";
    } catch (InsufficientData $e) {
        echo "$hex => short @", $e->getOffset(), " missing ", $e->getMissing(), ": ", $e->getReason(), "\n";
    } catch (MsgPackException $e) {
        echo "$hex => error @", $e->getOffset(), ": ", $e->getReason(), "\n";
    }
}

show('c0'); show('c3'); show('7f'); show('e0'); show('cdffff'); show('d3ffffffffffffffff'); show('cb3ff8000000000000');
show('ca3fc00000'); show('a3616263'); show('c40201ff'); show('93010203'); show('82a16101017f'); show('81a13501');
show('cfffffffffffffffff'); show('cfffffffffffffffff', 2); show('81cfffffffffffffffff01', 2);
show('c40161', 4);
show('d40501'); show('c7020a0102');
// a registered type goes to the callback: header offset, header size, payload size, depth
show('91d60100000001', 0, 512, [1 => true], function (int $at, int $h, int $n, int $depth) {
    echo "  callback($at, $h, $n, $depth)\n";
    return 'decoded';
});
// what the callback throws is thrown as is
show('d40500', 0, 512, [5 => true], fn () => throw new MsgPackException('from the callback', 7));
// truncations, with the offset shifted by $base
show(''); show('92'); show('dc0005c0'); show('da00'); show('da0010ab', 0, 512, null, null, 100); show('c9000000ff01');
show('d8'); show('df8000000001'); show('ddffffffff');
// invalid input
show('c1'); show('8191c001'); show('81c001'); show('81c2c2'); show('81cb000000000000000001'); show('81c40161', 4);
show('919191c0', 0, 2); show('9191c0', 0, 2);

// the offset argument and the end of the value
$buf = "\x01\x92\x02\x03\xc0";
$off = 1;
var_dump(msgpack_unpack($buf, $off, 5), $off);
var_dump(msgpack_unpack($buf, $off, 5), $off);

foreach ([[6, 5, 512], [0, 6, 512], [-1, 5, 512], [0, 5, 0], [0, 5, 5000]] as [$o, $len, $depth]) {
    try {
        msgpack_unpack($buf, $o, $len, 0, 0, $depth);
    } catch (\ValueError $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
--EXPECT--
c0 => NULL (offset 1)
c3 => true (offset 1)
7f => 127 (offset 1)
e0 => -32 (offset 1)
cdffff => 65535 (offset 3)
d3ffffffffffffffff => -1 (offset 9)
cb3ff8000000000000 => 1.5 (offset 9)
ca3fc00000 => 1.5 (offset 5)
a3616263 => 'abc' (offset 4)
c40201ff => '\001\377' (offset 4)
93010203 => array (  0 => 1,  1 => 2,  2 => 3,) (offset 4)
82a16101017f => array (  'a' => 1,  1 => 127,) (offset 6)
81a13501 => array (  5 => 1,) (offset 4)
cfffffffffffffffff => '18446744073709551615' (offset 9)
cfffffffffffffffff => 1.8446744073709552E+19 (offset 9)
81cfffffffffffffffff01 => array (  '18446744073709551615' => 1,) (offset 11)
c40161 => \Ferry\MsgPack\Type\Bin::__set_state(array(   'data' => 'a',)) (offset 3)
d40501 => \Ferry\MsgPack\Ext\RawExt::__set_state(array(   'type' => 5,   'data' => '\001',)) (offset 3)
c7020a0102 => \Ferry\MsgPack\Ext\RawExt::__set_state(array(   'type' => 10,   'data' => '\001\002',)) (offset 5)
  callback(1, 2, 4, 1)
91d60100000001 => array (  0 => 'decoded',) (offset 7)
d40500 => error @7: from the callback
 => short @0 missing 1: truncated value: 1 more bytes needed
92 => short @1 missing 2: truncated array of 2 elements: 2 more bytes needed
dc0005c0 => short @3 missing 4: truncated array of 5 elements: 4 more bytes needed
da00 => short @0 missing 1: truncated length header: 1 more bytes needed
da0010ab => short @100 missing 15: truncated str16 of 16 bytes: 15 more bytes needed
c9000000ff01 => short @0 missing 255: truncated ext of 255 bytes: 255 more bytes needed
d8 => short @0 missing 17: truncated ext of 16 bytes: 17 more bytes needed
df8000000001 => short @5 missing 4294967295: truncated map of 2147483648 entries: 4294967295 more bytes needed
ddffffffff => short @5 missing 4294967295: truncated array of 4294967295 elements: 4294967295 more bytes needed
c1 => error @0: invalid type byte 0xc1 (never used)
8191c001 => error @1: map key of type array is not supported (only int, str and bin keys)
81c001 => error @1: map key of type null is not supported (only int, str and bin keys)
81c2c2 => error @1: map key of type bool is not supported (only int, str and bin keys)
81cb000000000000000001 => error @1: map key of type float is not supported (only int, str and bin keys)
81c40161 => short @4 missing 1: truncated value: 1 more bytes needed
919191c0 => error @2: nesting deeper than 2 levels
9191c0 => array (  0 =>   array (    0 => NULL,  ),) (offset 3)
array(2) {
  [0]=>
  int(2)
  [1]=>
  int(3)
}
int(4)
NULL
int(5)
ValueError: Ferry\Ext\msgpack_unpack(): Argument #2 ($offset) must be between 0 and $length
ValueError: Ferry\Ext\msgpack_unpack(): Argument #3 ($length) must be between 0 and the buffer's length
ValueError: Ferry\Ext\msgpack_unpack(): Argument #2 ($offset) must be between 0 and $length
ValueError: Ferry\Ext\msgpack_unpack(): Argument #6 ($maxDepth) must be between 1 and 1024
ValueError: Ferry\Ext\msgpack_unpack(): Argument #6 ($maxDepth) must be between 1 and 1024