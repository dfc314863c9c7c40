--TEST--
ferry: frames_read() gives php/worker's Frame objects, equal to new Frame(...) over frames_parse()
--EXTENSIONS--
ferry
--SKIPIF--
<?php
$sdk = is_file(__DIR__ . '/sdk.inc') ? require __DIR__ . '/sdk.inc' : '';
if (!is_file($sdk)) echo 'skip php/worker not found (run through ext/ferry/build.sh)';
?>
--FILE--
<?php
require require __DIR__ . '/sdk.inc';
use Ferry\Worker\Frame;
use function Ferry\Ext\{frames_read, frames_parse, frame_encode};

mt_srand(16);
$stream = '';
for ($i = 0; $i < 100; $i++) {
    $options = $i % 3 === 0 ? [] : array_map(fn () => mt_rand(0, 0xFFFFFFFF), range(1, mt_rand(1, 10)));
    $stream .= frame_encode(mt_rand(0, 255), $options, $i % 7 === 0 ? '' : random_bytes(mt_rand(1, 300)), mt_rand(0, 255));
}
$stream .= substr(frame_encode(1, [], 'cut'), 0, 14);
[$objects, $end] = frames_read($stream, 0, 1000);
[$arrays, $endArrays] = frames_parse($stream, 0, 1000);
var_dump(count($objects), $end === $endArrays, $end === strlen($stream) - 14);
$same = true;
foreach ($arrays as $i => $a) {
    $same = $same && $objects[$i] == new Frame(...$a) && $objects[$i] instanceof Frame;
}
var_dump($same, $objects[1]->has($objects[1]->flags));
try {
    $objects[0]->payload = 'x';
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
try {
    frames_read("\x13" . str_repeat("\0", 11));
} catch (Ferry\Ext\FrameException $e) {
    echo $e->reason, "\n";
}
?>
--EXPECT--
int(100)
bool(true)
bool(true)
bool(true)
bool(true)
Cannot modify readonly property Ferry\Worker\Frame::$payload
crc
