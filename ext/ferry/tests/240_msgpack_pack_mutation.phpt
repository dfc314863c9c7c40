--TEST--
ferry: msgpack_pack() keeps iterating a safe array when a callback changes or frees it through a reference
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\msgpack_pack;

$inner = ['o' => new stdClass(), 'p' => 'tail', 'q' => [1, 2]];
$outer = [&$inner];
echo bin2hex(msgpack_pack($outer, 0, 0, function () use (&$inner) {
    $inner = null;
    return "\xc0";
})), "\n";
var_dump($inner);

$list = [new stdClass(), str_repeat('x', 40)];
$holder = ['l' => &$list];
echo bin2hex(msgpack_pack($holder, 0, 0, function () use (&$list) {
    $list[] = 'added';
    $list[1] = 'changed';
    return "\xc0";
})), "\n";
var_dump(count($list));
?>
--EXPECT--
9183a16fc0a170a47461696ca171920102
NULL
81a16c92c0d92878787878787878787878787878787878787878787878787878787878787878787878787878787878
int(3)