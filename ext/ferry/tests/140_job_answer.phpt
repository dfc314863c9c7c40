--TEST--
ferry: job_answer() writes FrameCodec::job()'s frame from the context and body given apart
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
use Ferry\Worker\FrameCodec;
use function Ferry\Ext\{job_answer, frame_decode};

mt_srand(16);
$bad = 0;
for ($i = 0; $i < 500; $i++) {
    $context = $i % 5 === 0 ? '' : random_bytes(mt_rand(1, 200));
    $body = $i % 7 === 0 ? '' : random_bytes(mt_rand(1, $i % 50 === 1 ? 70000 : 300));
    $id = $i % 3 === 0 ? 0xFFFFFFFF : mt_rand(0, 0xFFFFFFFF);
    if (job_answer($id, $context, $body) !== FrameCodec::job(strlen($context), $id, $context . $body)) {
        $bad++;
    }
}
echo "mismatches: $bad\n";
var_dump(frame_decode(job_answer(7, '{"status":200}', 'hi')));
foreach ([-1, 0x100000000] as $id) {
    try {
        job_answer($id, '', '');
    } catch (ValueError $e) {
        echo $e->getMessage(), "\n";
    }
}
?>
--EXPECT--
mismatches: 0
array(4) {
  [0]=>
  int(4)
  [1]=>
  array(2) {
    [0]=>
    int(14)
    [1]=>
    int(7)
  }
  [2]=>
  string(16) "{"status":200}hi"
  [3]=>
  int(0)
}
Ferry\Ext\job_answer(): Argument #1 ($id) must be within 0..4294967295, got -1
Ferry\Ext\job_answer(): Argument #1 ($id) must be within 0..4294967295, got 4294967296
