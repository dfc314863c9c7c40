--TEST--
Ferry\Ext\output_begin()/take()/end(): a job's output at the SAPI's write, under one removable default buffer
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{output_begin, output_take, output_end};

$seen = [];

// The first line of many download scripts: discards what came before, ends, and what
// follows goes straight out.
output_begin();
$seen['level at start'] = ob_get_level();
$seen['handlers'] = ob_list_handlers();
echo 'a';
while (ob_get_level()) {
    ob_end_clean();
}
echo 'b';
$seen['snippet'] = output_end();
$seen['level after'] = ob_get_level();

// ob_get_clean() at the top returns what was echoed so far; the buffer is gone after it.
output_begin();
echo 'x';
$got = ob_get_clean();
echo 'y';
$seen['ob_get_clean'] = [$got, ob_get_level(), output_end()];

// Buffers left open are flushed into the answer, as at the end of a request.
output_begin();
echo 'one;';
ob_start();
echo 'two;';
ob_start(static fn (string $s): string => strtoupper($s));
echo 'three';
$seen['left open'] = output_end();
$seen['level after left open'] = ob_get_level();

// Even one that cannot be removed, as PHP ends them all at the end of a request.
output_begin();
ob_start(null, 0, PHP_OUTPUT_HANDLER_STDFLAGS & ~PHP_OUTPUT_HANDLER_REMOVABLE);
echo 'stuck';
$seen['not removable'] = [output_end(), ob_get_level()];

// The next job starts as the first did, with nothing of the last one.
output_begin();
$seen['next job'] = [ob_get_level(), ob_get_length(), output_end()];

// What a streamed answer takes mid-job; the default buffer stays for what follows.
output_begin();
echo 'part1';
$part = output_take();
$seen['take'] = [$part, ob_get_level()];
echo 'part2';
$seen['after take'] = output_end();

// php.ini-production's output_buffering: the buffer passes its content on at 4096 bytes.
output_begin();
echo str_repeat('x', 5000);
$length = ob_get_length();
$out = output_end();
$seen['chunk 4096'] = [$length, strlen($out)];

// Discarded output never reaches the answer.
output_begin();
echo 'secret';
ob_clean();
echo 'shown';
$seen['ob_clean'] = output_end();

// Outside a job: nothing to take.
$seen['outside'] = [output_take(), output_end()];

var_export($seen);
echo "\n";
?>
--EXPECT--
array (
  'level at start' => 1,
  'handlers' => 
  array (
    0 => 'default output handler',
  ),
  'snippet' => 'b',
  'level after' => 0,
  'ob_get_clean' => 
  array (
    0 => 'x',
    1 => 0,
    2 => 'y',
  ),
  'left open' => 'one;two;THREE',
  'level after left open' => 0,
  'not removable' => 
  array (
    0 => 'stuck',
    1 => 0,
  ),
  'next job' => 
  array (
    0 => 1,
    1 => 0,
    2 => '',
  ),
  'take' => 
  array (
    0 => 'part1',
    1 => 1,
  ),
  'after take' => 'part2',
  'chunk 4096' => 
  array (
    0 => 0,
    1 => 5000,
  ),
  'ob_clean' => 'shown',
  'outside' => 
  array (
    0 => '',
    1 => '',
  ),
)
