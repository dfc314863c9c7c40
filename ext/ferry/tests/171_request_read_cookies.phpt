--TEST--
ferry: request_read() takes the server's cookies as $_COOKIE, and leaves a nested cookie's path to fromContext()
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
use Ferry\Worker\Http\Request;
use function Ferry\Ext\request_read;

// The server sends PHP's $_COOKIE already (names mangled, values decoded, the first of
// two equal names kept): flat entries are final, whatever they contain.
$flat = ['a_b' => '3', 'e' => '', 'i' => '"q"', 'p' => 'x%41 +', "n\0" => 'x', 7 => 'seven'];
$r = request_read(serialize(['method' => 'GET', 'cookies' => $flat]), '');
var_dump($r !== null && $r->cookies === $flat);

// A nested cookie comes as its path: C leaves it to PHP, which rebuilds the array.
$nested = serialize(['method' => 'GET', 'cookies' => ['a_b' => '3', 'j[0]' => '1', 'j[1]' => '2', 'k[x[y][ z]' => 'v']]);
var_dump(request_read($nested, ''));
var_export(Request::fromContext($nested, '')->cookies);
echo "\n";
?>
--EXPECT--
bool(true)
NULL
array (
  'a_b' => '3',
  'j' => 
  array (
    0 => '1',
    1 => '2',
  ),
  'k' => 
  array (
    'x[y' => 
    array (
      ' z' => 'v',
    ),
  ),
)
