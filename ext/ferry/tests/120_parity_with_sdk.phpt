--TEST--
ferry: the C codec gives php/worker's FrameCodec/FrameParser results, fault reasons and messages on random input
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

use Ferry\Worker\{FrameCodec, FrameException, FrameParser};
use function Ferry\Ext\{frames_parse, frame_decode, frame_encode, answer_frame};

function sdk(callable $f): array {
    try {
        return ['ok', $f()];
    } catch (FrameException $e) {
        return ['fault', $e->reason, $e->getMessage()];
    }
}
function ext(callable $f): array {
    try {
        return ['ok', $f()];
    } catch (Ferry\Ext\FrameException $e) {
        return ['fault', $e->reason, $e->getMessage()];
    }
}
// Seeded, so a failure reproduces.
function bytes(int $n): string {
    $s = '';
    while ($n-- > 0) {
        $s .= chr(mt_rand(0, 255));
    }
    return $s;
}
function asArrays(array $frames): array {
    return array_map(fn ($f) => [$f->flags, $f->options, $f->payload, $f->streamFlags], $frames);
}

mt_srand(1616);
$stats = ['same' => 0, 'differ' => 0];
$faults = [];
for ($i = 0; $i < 3000; $i++) {
    $max = [64 * 1024 * 1024, 0, 5, 40, 300][mt_rand(0, 4)];
    $buffer = '';
    for ($n = mt_rand(1, 4); $n > 0; $n--) {
        $options = array_map(fn () => mt_rand(0, 0xFFFFFFFF), range(0, mt_rand(0, 10)));
        array_pop($options);
        $buffer .= FrameCodec::encode(mt_rand(0, 255), $options, bytes(mt_rand(0, 60)), mt_rand(0, 255));
    }
    // Mutate: flip bytes (often in a header), cut the tail, or leave it whole.
    switch (mt_rand(0, 3)) {
        case 0:
            for ($k = mt_rand(1, 3); $k > 0; $k--) {
                $at = mt_rand(0, min(strlen($buffer) - 1, 40));
                $buffer[$at] = chr(mt_rand(0, 255));
            }
            break;
        case 1:
            $buffer = substr($buffer, 0, mt_rand(0, strlen($buffer)));
            break;
        case 2:
            // a header that fixes up its own CRC, so the later checks are reached
            $head = chr(0x10 | mt_rand(0, 15)) . chr(mt_rand(0, 255)) . pack('V', mt_rand(0, 1) ? mt_rand(0, 80) : mt_rand(0, 0xFFFFFFFF));
            $buffer = $head . pack('V', crc32($head)) . "\0\0" . bytes(mt_rand(0, 80)) . $buffer;
            break;
    }
    $codec = new FrameCodec($max);

    // Streaming: the SDK parser vs frames_parse() on the same bytes.
    $a = sdk(function () use ($codec, $buffer) {
        $p = new FrameParser($codec);
        $p->push($buffer);
        $frames = asArrays($p->drain());
        return [$frames, strlen($buffer) - $p->buffered()];
    });
    $b = ext(fn () => frames_parse($buffer, 0, $max));
    // One whole frame: FrameCodec::decode() vs frame_decode().
    $c = sdk(function () use ($codec, $buffer) {
        $f = $codec->decode($buffer);
        return [$f->flags, $f->options, $f->payload, $f->streamFlags];
    });
    $d = ext(fn () => frame_decode($buffer, $max));
    foreach ([[$a, $b], [$c, $d]] as [$x, $y]) {
        if ($x === $y) {
            $stats['same']++;
            if ($x[0] === 'fault') {
                $faults[$x[1]] = true;
            }
        } else {
            $stats['differ']++;
            if ($stats['differ'] < 5) {
                echo 'DIFFER on ', bin2hex($buffer), ":\n", var_export($x, true), "\n", var_export($y, true), "\n";
            }
        }
    }
}
var_dump($stats['differ'], $stats['same'] === 6000);
ksort($faults);
echo 'fault reasons seen: ', implode(',', array_keys($faults)), "\n";

// Encoding, valid and invalid, compared the same way.
$encodeCases = [
    [0, [], ''], [255, [0, 4294967295], 'x', 255], [4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'ten'],
    [256, [], ''], [-1, [], ''], [0, [], '', 256], [0, [], '', -3],
    [0, range(1, 11), ''], [0, [-1], ''], [0, [4294967296], ''], [0, [1, '2'], ''], [0, [1.5], ''],
    [0, ['k' => null], ''], [0, [2 => 7, 0 => 9], 'order'], [0, [[1]], ''],
];
$same = 0;
foreach ($encodeCases as $args) {
    $x = sdk(fn () => FrameCodec::encode(...$args));
    $y = ext(fn () => frame_encode(...$args));
    if ($x === $y) {
        $same++;
    } else {
        echo 'encode DIFFER ', json_encode($args), ': ', var_export($x, true), ' vs ', var_export($y, true), "\n";
    }
}
echo "encode: $same/", count($encodeCases), " identical\n";
$same = 0;
for ($i = 0; $i < 200; $i++) {
    $payload = bytes(mt_rand(0, 100));
    $ctx = mt_rand(0, strlen($payload));
    $id = mt_rand(0, 0xFFFFFFFF);
    $same += (int) (FrameCodec::job($ctx, $id, $payload) === answer_frame($ctx, $id, $payload));
}
echo "answer_frame: $same/200 identical to FrameCodec::job()\n";
?>
--EXPECT--
int(0)
bool(true)
fault reasons seen: crc,invalid,options,too_large,truncated,version
encode: 15/15 identical
answer_frame: 200/200 identical to FrameCodec::job()
