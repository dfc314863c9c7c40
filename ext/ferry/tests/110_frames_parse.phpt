--TEST--
ferry: frames_parse() slices pipelined frames at any chunking, honours maxPayload and checks its arguments
--EXTENSIONS--
ferry
--FILE--
<?php
use Ferry\Ext\FrameException;
use function Ferry\Ext\{frames_parse, frame_encode, answer_frame};

mt_srand(16);
$expected = [];
$stream = '';
for ($i = 0; $i < 200; $i++) {
    $options = $i % 3 === 0 ? [] : array_map(fn () => mt_rand(0, 0xFFFFFFFF), range(1, mt_rand(1, 10)));
    $payload = $i % 7 === 0 ? '' : random_bytes(mt_rand(1, $i % 50 === 1 ? 70000 : 300));
    $frame = [mt_rand(0, 255), $options, $payload, mt_rand(0, 255)];
    $expected[] = $frame;
    $stream .= frame_encode(...$frame);
}
// Feed the stream in random chunks, dropping consumed bytes as FrameParser::push() does.
$got = [];
$buffer = '';
$offset = 0;
for ($pos = 0; $pos < strlen($stream);) {
    $n = mt_rand(1, 9000);
    $buffer .= substr($stream, $pos, $n);
    $pos += $n;
    [$frames, $offset] = frames_parse($buffer, $offset, 70000);
    array_push($got, ...$frames);
    if (mt_rand(0, 1) === 1) {
        $buffer = substr($buffer, $offset);
        $offset = 0;
    }
}
var_dump($got === $expected, $offset === strlen($buffer));

// One byte at a time.
$one = frame_encode(0x04, [3, 9], 'ctxbody');
$buffer = '';
$seen = 0;
for ($i = 0; $i < strlen($one); $i++) {
    $buffer .= $one[$i];
    [$frames, $offset] = frames_parse($buffer, 0);
    $seen += count($frames);
}
var_dump($seen, $offset);
var_dump(answer_frame(3, 9, 'ctxbody') === $one);

// maxPayload: equal passes, one more is too large (checked before the payload arrives).
$f = frame_encode(0, [], str_repeat('x', 100));
var_dump(count(frames_parse($f, 0, 100)[0]));
foreach ([[$f, 99], [substr($f, 0, 12), 99]] as [$bytes, $max]) {
    try {
        frames_parse($bytes, 0, $max);
    } catch (FrameException $e) {
        echo $e->reason, ': ', $e->getMessage(), "\n";
    }
}
// A bad header after good frames: the offset in the message is the bad frame's.
$good = frame_encode(1, [], 'ok');
$bad = $good;
$bad[7] = chr(ord($bad[7]) ^ 1);
try {
    frames_parse($good . $good . $bad);
} catch (FrameException $e) {
    echo $e->reason, ': ', $e->getMessage(), "\n";
}
// Starting at an offset inside the buffer.
[$frames, $offset] = frames_parse('garbage' . $good, 7);
var_dump($frames[0][2], $offset);

foreach ([
    fn () => frames_parse('abc', 4),
    fn () => frames_parse('abc', -1),
    fn () => frames_parse('', 0, -1),
    fn () => frames_parse('', 0, 0x100000000),
    fn () => answer_frame(5, 1, 'abc'),
    fn () => answer_frame(-1, 1, 'abc'),
    fn () => answer_frame(0, 0x100000000, 'abc'),
] as $call) {
    try {
        $call();
    } catch (\ValueError $e) {
        echo $e->getMessage(), "\n";
    }
}
?>
--EXPECT--
bool(true)
bool(true)
int(1)
int(27)
bool(true)
int(1)
too_large: payload of 100 bytes at offset 0 exceeds the limit of 99 bytes
too_large: payload of 100 bytes at offset 0 exceeds the limit of 99 bytes
crc: header CRC mismatch at offset 28: stored a3e931ad, computed a3e930ad
string(2) "ok"
int(21)
Ferry\Ext\frames_parse(): Argument #2 ($offset) must be within 0..3 (the buffer length), got 4
Ferry\Ext\frames_parse(): Argument #2 ($offset) must be within 0..3 (the buffer length), got -1
Ferry\Ext\frames_parse(): Argument #3 ($maxPayload) must be within 0..4294967295, got -1
Ferry\Ext\frames_parse(): Argument #3 ($maxPayload) must be within 0..4294967295, got 4294967296
Ferry\Ext\answer_frame(): Argument #1 ($contextLength) must be within 0..3 (the payload length), got 5
Ferry\Ext\answer_frame(): Argument #1 ($contextLength) must be within 0..3 (the payload length), got -1
Ferry\Ext\answer_frame(): Argument #2 ($id) must be within 0..4294967295, got 4294967296
