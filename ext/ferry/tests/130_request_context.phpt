--TEST--
ferry: request_context() gives the same array as unserialize() for the gateway's subset, null outside it
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\request_context;

$opts = ['allowed_classes' => false, 'max_depth' => 16];
$same = static function (string $s) use ($opts): string {
    $c = request_context($s);
    if ($c === null) {
        return 'null';
    }
    return $c === @unserialize($s, $opts) ? 'same' : 'DIFFERENT';
};

$hello = serialize([
    'method' => 'GET', 'uri' => '/', 'path' => '/', 'remote_addr' => '127.0.0.1:1', 'host' => 'h',
    'headers' => ['Host' => ['h'], 'Accept' => ['a', 'b']],
]);
$full = serialize([
    'method' => 'POST', 'uri' => '/u?a=1', 'path' => '/u', 'query' => 'a=1', 'protocol' => 'HTTP/1.0',
    'remote_addr' => '[::1]:2', 'host' => 'x', 'scheme' => 'https', 'headers' => ['X' => ['', "\0\"';"]],
    'cookies' => ['5' => 'numeric key', '-1' => 'negative', '007' => 'zero-led stays a string', 'a' => 'b'],
    'form' => [['f', 'v'], ['f[]', 'w']], 'files' => [['up', 'a.txt', 'text/plain', '/tmp/x', 0, 12345678901]],
    'parsed' => true, 'body_file' => '/tmp/b', 'neg' => -42, 'f' => false,
]);
foreach (['hello' => $hello, 'full' => $full, 'empty' => 'a:0:{}', 'nested16' => str_repeat('a:1:{i:0;', 15) . 'a:0:{}' . str_repeat('}', 15)] as $name => $s) {
    echo "$name: ", $same($s), "\n";
}
var_dump(request_context($full)['cookies']);

// Outside the subset: null, and unserialize() decides.
foreach ([
    'too deep' => str_repeat('a:1:{i:0;', 16) . 'a:0:{}' . str_repeat('}', 16),
    'object' => 'a:1:{i:0;O:8:"stdClass":0:{}}',
    'float' => 'a:1:{i:0;d:1.5;}',
    'null' => 'a:1:{i:0;N;}',
    'ref' => 'a:2:{i:0;i:1;i:1;R:2;}',
    'not an array' => 's:1:"a";',
    'trailing' => 'a:0:{}x',
    'leading zero' => 'a:1:{i:0;i:01;}',
    'plus' => 'a:1:{i:0;i:+1;}',
    'minus zero' => 'a:1:{i:0;i:-0;}',
    'long int' => 'a:1:{i:0;i:1234567890123456789;}',
    'short string' => 'a:1:{i:0;s:5:"abc";}',
    'long string' => 'a:1:{i:0;s:2:"abc";}',
    'huge length' => 'a:1:{i:0;s:99999999999:"abc";}',
    'huge count' => 'a:999999999:{}',
    'count too big' => 'a:2:{i:0;b:1;}',
    'count too small' => 'a:1:{i:0;b:1;i:1;b:0;}',
    'bad bool' => 'a:1:{i:0;b:2;}',
    'bool key' => 'a:1:{b:1;b:1;}',
    'truncated' => 'a:1:{s:3:"abc',
    'empty' => '',
] as $name => $s) {
    echo "$name: ", var_export(request_context($s), true), "\n";
}

// Mutations of real contexts: wherever the C reader answers, it answers as unserialize().
mt_srand(16);
$checked = $answered = 0;
foreach ([$hello, $full] as $seed) {
    for ($i = 0; $i < 20000; $i++) {
        $s = $seed;
        for ($k = mt_rand(1, 3); $k > 0; $k--) {
            $at = mt_rand(0, strlen($s));
            $s = match (mt_rand(0, 2)) {
                0 => substr($s, 0, $at) . substr($s, $at + 1),
                1 => substr($s, 0, $at) . chr(mt_rand(0, 255)) . substr($s, $at + 1),
                2 => substr($s, 0, $at) . '0123456789:;"{}aisb-'[mt_rand(0, 19)] . substr($s, $at),
            };
        }
        $checked++;
        $r = $same($s);
        if ($r === 'DIFFERENT') {
            echo "DIFFERENT for ", bin2hex($s), "\n";
        }
        $answered += $r === 'same' ? 1 : 0;
    }
}
echo "mutations checked: $checked, some answered: ", $answered > 100 ? 'yes' : "no ($answered)", "\n";
?>
--EXPECT--
hello: same
full: same
empty: same
nested16: same
array(4) {
  [5]=>
  string(11) "numeric key"
  [-1]=>
  string(8) "negative"
  ["007"]=>
  string(23) "zero-led stays a string"
  ["a"]=>
  string(1) "b"
}
too deep: NULL
object: NULL
float: NULL
null: NULL
ref: NULL
not an array: NULL
trailing: NULL
leading zero: NULL
plus: NULL
minus zero: NULL
long int: NULL
short string: NULL
long string: NULL
huge length: NULL
huge count: NULL
count too big: NULL
count too small: NULL
bad bool: NULL
bool key: NULL
truncated: NULL
empty: NULL
mutations checked: 40000, some answered: yes
