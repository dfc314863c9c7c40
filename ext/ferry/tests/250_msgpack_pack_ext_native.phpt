--TEST--
ferry: msgpack_pack() packs php/msgpack's Timestamp, Decimal, Uuid, Datetime and Interval itself when the class map names php/msgpack's own extension, and leaves the rest to the callback
--EXTENSIONS--
ferry
--FILE--
<?php
require dirname(require __DIR__ . '/sdk.inc', 2) . '/msgpack/autoload.php';
use Ferry\MsgPack\Ext\{Datetime, Decimal, ErrorStack, BoxError, Interval, Timestamp, Uuid};
use Ferry\MsgPack\{Extensions, Packer};
use function Ferry\Ext\msgpack_pack;

$classes = Extensions::tarantool()->byClass();
$cb = function (mixed $v, int $depth) {
    echo '  callback(', get_class($v), ", $depth)\n";
    return "\xc0";
};
$values = [
    new Timestamp(1), new Timestamp(1, 1), new Timestamp(0x400000000), new Timestamp(-1, 5),
    Decimal::fromString('-12.34'), Decimal::fromString('0.000000000000000000000000000000000010'), Decimal::fromString('12'), Decimal::fromString('1e10'),
    Uuid::fromString('f6423bdf-b49e-4913-b361-0740c9702e4b'),
    new Datetime(0), new Datetime(1661969274, 308543321, 180), new Datetime(Datetime::MIN_SECONDS, 0, -720, 1024),
    new Interval(year: 1, month: 200, day: -77), new Interval(adjust: 0), new Interval(second: PHP_INT_MIN, week: -2147483648),
    new ErrorStack(new BoxError('ClientError', 'm', 1)),
    (new ReflectionClass(Datetime::class))->newInstanceWithoutConstructor(),
];
foreach ($values as $v) {
    $c = msgpack_pack([$v], 0, 0, $cb, $classes);
    echo get_class($v), ' ', bin2hex($c), "\n";
}
// the same bytes as the PHP extensions
$packer = (function () { ini_set('ferry.msgpack_php_only', '1'); return new Packer(0, Extensions::tarantool()); })();
foreach (array_slice($values, 0, 15) as $v) {
    if (bin2hex(msgpack_pack($v, 0, 0, $cb, $classes)) !== bin2hex($packer->pack($v))) {
        echo 'differs: ', get_class($v), "\n";
    }
}
// without the class map, or when another extension owns the class: the callback
echo bin2hex(msgpack_pack(new Timestamp(1), 0, 0, $cb)), "\n";
$other = new class implements Ferry\MsgPack\Extension {
    public function getType(): int { return 50; }
    public function getClass(): ?string { return Datetime::class; }
    public function pack(Packer $p, object $v): string { return 'x'; }
    public function unpack(Ferry\MsgPack\BufferUnpacker $u, int $n): mixed { return null; }
};
echo bin2hex(msgpack_pack(new Datetime(0), 0, 0, $cb, Extensions::tarantool()->with($other)->byClass())), "\n";
?>
--EXPECT--
Ferry\MsgPack\Ext\Timestamp 91d6ff00000001
Ferry\MsgPack\Ext\Timestamp 91d7ff0000000400000001
Ferry\MsgPack\Ext\Timestamp 91c70cff000000000000000400000000
Ferry\MsgPack\Ext\Timestamp 91c70cff00000005ffffffffffffffff
Ferry\MsgPack\Ext\Decimal 91d6010201234d
Ferry\MsgPack\Ext\Decimal 91c7030124010c
Ferry\MsgPack\Ext\Decimal 91c7030100012c
Ferry\MsgPack\Ext\Decimal 91d501f61c
Ferry\MsgPack\Ext\Uuid 91d802f6423bdfb49e4913b3610740c9702e4b
Ferry\MsgPack\Ext\Datetime 91d7040000000000000000
Ferry\MsgPack\Ext\Datetime 91d8047aa30f630000000059ff6312b4000000
Ferry\MsgPack\Ext\Datetime 91d80480b76c883157ffff0000000030fd0004
Ferry\MsgPack\Ext\Interval 91c70b0604000101ccc803d0b30801
Ferry\MsgPack\Ext\Interval 91d40600
Ferry\MsgPack\Ext\Interval 91c713060302d28000000006d380000000000000000801
  callback(Ferry\MsgPack\Ext\ErrorStack, 1)
Ferry\MsgPack\Ext\ErrorStack 91c0
  callback(Ferry\MsgPack\Ext\Datetime, 1)
Ferry\MsgPack\Ext\Datetime 91c0
  callback(Ferry\MsgPack\Ext\Timestamp, 0)
c0
  callback(Ferry\MsgPack\Ext\Datetime, 0)
c0
