--TEST--
ferry: msgpack_unpack() builds php/msgpack's Timestamp, Decimal, Uuid, Datetime and Interval itself, and leaves odd payloads and other extensions to the callback
--EXTENSIONS--
ferry
--FILE--
<?php
require dirname(require __DIR__ . '/sdk.inc', 2) . '/msgpack/autoload.php';
use Ferry\MsgPack\Extensions;
use function Ferry\Ext\msgpack_unpack;

$exts = Extensions::tarantool()->byType();
$cb = function (int $at, int $h, int $n, int $depth) {
    echo "  callback($at, $h, $n, $depth)\n";
    return 'from PHP';
};
foreach ([
    'd6ff00000001', 'd7ff0000000400000002', 'c70cff000000050000000000000003', 'd7ffee6b280000000000', // last: ns out of range
    'd6010201234d', 'd501000c', 'c7030102000d', 'd601000000d0', 'c70301cd0001', 'd5017f1c', 'd5010a0d', // 0 digits, negative zero
    'd802' . str_repeat('00', 16), 'c70f02' . str_repeat('00', 15),
    'd8047aa30f630000000059ff6312b4000000', 'd70480b76c883157ffff', 'd8040000000000000000' . '0000000000000000',
    'd60400000000', 'd7047fb76c883157ffff', 'd804' . str_repeat('00', 8) . '0000000049030000', // 4 bytes, seconds, tzoffset: PHP
    'c70b0604000101ccc803d0b30801', 'd40600', 'c70e0602' . '03d30000000000000005' . '00cc07',
    'c7030601' . '0803', 'c7050602' . '00010002', 'd6060000' . '0000', 'c7070601' . '00ce80000000', // adjust, twice, trailing, int32: PHP
    'd40300', 'd4050a', // an error stack: PHP; an unregistered type: RawExt
] as $hex) {
    $bin = hex2bin($hex);
    $off = 0;
    $v = msgpack_unpack($bin, $off, strlen($bin), 0, 0, 512, $exts, $cb);
    echo $hex, ' => ', is_object($v) ? get_class($v) . ' ' . json_encode(get_object_vars($v) ?: (string) $v) : var_export($v, true), "\n";
}
?>
--EXPECT--
d6ff00000001 => Ferry\MsgPack\Ext\Timestamp {"seconds":1,"nanoseconds":0}
d7ff0000000400000002 => Ferry\MsgPack\Ext\Timestamp {"seconds":2,"nanoseconds":1}
c70cff000000050000000000000003 => Ferry\MsgPack\Ext\Timestamp {"seconds":3,"nanoseconds":5}
  callback(0, 2, 8, 0)
d7ffee6b280000000000 => 'from PHP'
d6010201234d => Ferry\MsgPack\Ext\Decimal {"negative":true,"digits":"1234","scale":2}
d501000c => Ferry\MsgPack\Ext\Decimal {"negative":false,"digits":"0","scale":0}
c7030102000d => Ferry\MsgPack\Ext\Decimal {"negative":false,"digits":"0","scale":2}
  callback(0, 2, 4, 0)
d601000000d0 => 'from PHP'
  callback(0, 3, 3, 0)
c70301cd0001 => 'from PHP'
d5017f1c => Ferry\MsgPack\Ext\Decimal {"negative":false,"digits":"1","scale":127}
d5010a0d => Ferry\MsgPack\Ext\Decimal {"negative":false,"digits":"0","scale":10}
d80200000000000000000000000000000000 => Ferry\MsgPack\Ext\Uuid "00000000-0000-0000-0000-000000000000"
  callback(0, 3, 15, 0)
c70f02000000000000000000000000000000 => 'from PHP'
d8047aa30f630000000059ff6312b4000000 => Ferry\MsgPack\Ext\Datetime {"seconds":1661969274,"nanoseconds":308543321,"tzoffset":180,"tzindex":0}
d70480b76c883157ffff => Ferry\MsgPack\Ext\Datetime {"seconds":-185604722870400,"nanoseconds":0,"tzoffset":0,"tzindex":0}
d80400000000000000000000000000000000 => Ferry\MsgPack\Ext\Datetime {"seconds":0,"nanoseconds":0,"tzoffset":0,"tzindex":0}
  callback(0, 2, 4, 0)
d60400000000 => 'from PHP'
  callback(0, 2, 8, 0)
d7047fb76c883157ffff => 'from PHP'
  callback(0, 2, 16, 0)
d80400000000000000000000000049030000 => 'from PHP'
c70b0604000101ccc803d0b30801 => Ferry\MsgPack\Ext\Interval {"year":1,"month":200,"week":0,"day":-77,"hour":0,"minute":0,"second":0,"nanosecond":0,"adjust":1}
d40600 => Ferry\MsgPack\Ext\Interval {"year":0,"month":0,"week":0,"day":0,"hour":0,"minute":0,"second":0,"nanosecond":0,"adjust":0}
c70e060203d3000000000000000500cc07 => Ferry\MsgPack\Ext\Interval {"year":7,"month":0,"week":0,"day":5,"hour":0,"minute":0,"second":0,"nanosecond":0,"adjust":0}
  callback(0, 3, 3, 0)
c70306010803 => 'from PHP'
  callback(0, 3, 5, 0)
c705060200010002 => 'from PHP'
  callback(0, 2, 4, 0)
d60600000000 => 'from PHP'
  callback(0, 3, 7, 0)
c707060100ce80000000 => 'from PHP'
  callback(0, 2, 1, 0)
d40300 => 'from PHP'
d4050a => Ferry\MsgPack\Ext\RawExt {"type":5,"data":"\n"}