--TEST--
ferry: request_read() builds the Request that fromContext()'s PHP path builds, or leaves it (null) to that path
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

// Request::fromContext()'s PHP path, for an array it accepts (docs/protocol.md).
$php = static function (array $c, string $body): Request {
    return new Request($c['method'], $c['uri'] ?? '/', $c['path'] ?? '/', $c['query'] ?? '', $c['protocol'] ?? 'HTTP/1.1',
        $c['remote_addr'] ?? '', $c['host'] ?? '', $c['headers'] ?? [],
        ($c['cookies'] ?? []) === [] ? [] : Request::decodeCookies($c['cookies']), $body, $c['form'] ?? [],
        $c['files'] ?? [], $c['parsed'] ?? false, 0.0, $c['scheme'] ?? 'http', $c['body_file'] ?? null);
};
$state = static function (Request $r): array {
    $out = [];
    foreach ((new ReflectionObject($r))->getProperties() as $p) {
        if (!$p->isStatic() && $p->getName() !== 'time') {
            $p->setAccessible(true);
            $out[$p->getName()] = $p->isInitialized($r) ? $p->getValue($r) : '(uninitialised)';
        }
    }
    return $out;
};
$check = static function (string $context, string $body) use ($php, $state): string {
    $r = request_read($context, $body);
    if ($r === null) {
        return 'null';
    }
    $c = @unserialize($context, ['allowed_classes' => false, 'max_depth' => 16]);
    try {
        $want = $php($c, $body);
    } catch (TypeError $e) {
        return 'BUILT WHERE PHP THROWS: ' . $e->getMessage();
    }
    if (abs($r->time - microtime(true)) > 5) {
        return 'BAD TIME';
    }
    return $state($r) === $state($want) ? 'same' : 'DIFFERENT: ' . json_encode([$state($r), $state($want)]);
};

$hello = serialize(['method' => 'GET', 'uri' => '/', 'path' => '/', 'remote_addr' => '127.0.0.1:1', 'host' => 'h',
    'headers' => ['Host' => ['h']]]);
$full = serialize(['method' => 'POST', 'uri' => '/u?a=1', 'path' => '/u', 'query' => 'a=1', 'protocol' => 'HTTP/1.0',
    'remote_addr' => '[::1]:2', 'host' => 'x', 'scheme' => 'https', 'headers' => ['X' => ['', "\0\"';"]],
    'cookies' => ['5' => 'numeric name', 'a' => 'b+c'], 'form' => [['f', 'v']],
    'files' => [['up', 'a.txt', 'text/plain', '/tmp/x', 0, 12]], 'parsed' => true, 'extra' => 'ignored']);
foreach ([
    'hello' => [$hello, ''],
    'full' => [$full, 'body'],
    'method only' => [serialize(['method' => 'PUT']), 'x'],
    'cookie with %' => [serialize(['method' => 'GET', 'cookies' => ['a' => 'x%20y']]), ''],
    'cookie name with .' => [serialize(['method' => 'GET', 'cookies' => ['a.b' => 'x']]), ''],
    'body file' => [serialize(['method' => 'GET', 'body_file' => '/tmp/b']), ''],
    'no method' => [serialize(['uri' => '/']), ''],
    'int method' => [serialize(['method' => 5]), ''],
    'string headers' => [serialize(['method' => 'GET', 'headers' => 'x']), ''],
    'int parsed' => [serialize(['method' => 'GET', 'parsed' => 1]), ''],
    'not the subset' => [serialize(['method' => 'GET', 'x' => 1.5]), ''],
    'garbage' => ['nope', ''],
    // The top level is read field by field: what else it may hold, and what it may not.
    'unknown keys' => [serialize([7 => 'int key', 'method' => 'GET', '5' => ['numeric' => [true, -1]], 'x' => '',
        'Method' => 'POST', 'uri ' => 'x', 'extra' => false]), ''],
    'method last' => [serialize(['headers' => ['A' => ['1', '2'], 'B' => []], 'cookies' => [], 'method' => 'DELETE']), ''],
    'parsed false' => [serialize(['method' => 'GET', 'parsed' => false, 'form' => [], 'files' => []]), ''],
    'defaults spelled out' => [serialize(['method' => 'GET', 'uri' => '/', 'path' => '/', 'query' => '', 'protocol' => 'HTTP/1.1',
        'remote_addr' => '', 'host' => '', 'scheme' => 'http', 'headers' => [], 'cookies' => [], 'form' => [], 'files' => [],
        'parsed' => false]), ''],
    'depth 16 in an unknown key' => ['a:2:{s:6:"method";s:3:"GET";s:1:"x";' . str_repeat('a:1:{i:0;', 14) . 'a:0:{}'
        . str_repeat('}', 14) . '}', ''],
    'depth 16 in headers' => ['a:2:{s:6:"method";s:3:"GET";s:7:"headers";' . str_repeat('a:1:{i:0;', 14) . 'a:0:{}'
        . str_repeat('}', 14) . '}', ''],
    'depth 17 in an unknown key' => ['a:2:{s:6:"method";s:3:"GET";s:1:"x";' . str_repeat('a:1:{i:0;', 15) . 'a:0:{}'
        . str_repeat('}', 15) . '}', ''],
    'depth 17 in headers' => ['a:2:{s:6:"method";s:3:"GET";s:7:"headers";' . str_repeat('a:1:{i:0;', 15) . 'a:0:{}'
        . str_repeat('}', 15) . '}', ''],
    'float in an unknown key' => [serialize(['method' => 'GET', 'x' => [1.5]]), ''],
    'method twice' => ['a:2:{s:6:"method";s:3:"GET";s:6:"method";s:4:"POST";}', ''],
    'headers twice' => ['a:3:{s:6:"method";s:3:"GET";s:7:"headers";a:0:{}s:7:"headers";a:1:{s:1:"A";a:0:{}}}', ''],
    'header key twice' => ['a:2:{s:6:"method";s:3:"GET";s:7:"headers";a:2:{s:1:"A";a:1:{i:0;s:1:"x";}s:1:"A";a:1:{i:0;s:1:"y";}}}', ''],
    'unknown key twice' => ['a:3:{s:6:"method";s:3:"GET";s:1:"x";i:1;s:1:"x";i:2;}', ''],
    'body file of another type' => [serialize(['method' => 'GET', 'body_file' => 5]), ''],
    'array method' => [serialize(['method' => ['GET']]), ''],
    'int uri' => [serialize(['method' => 'GET', 'uri' => 1]), ''],
    'bool host' => [serialize(['method' => 'GET', 'host' => true]), ''],
    'string parsed' => [serialize(['method' => 'GET', 'parsed' => '1']), ''],
    'bool form' => [serialize(['method' => 'GET', 'form' => false]), ''],
    'int files' => [serialize(['method' => 'GET', 'files' => 0]), ''],
    'string cookies' => [serialize(['method' => 'GET', 'cookies' => 'a=b']), ''],
    'array cookie' => [serialize(['method' => 'GET', 'cookies' => ['a' => ['b']]]), ''],
    'int cookie' => [serialize(['method' => 'GET', 'cookies' => ['a' => 1]]), ''],
    'cookie name with NUL' => [serialize(['method' => 'GET', 'cookies' => ["a\0b" => 'x']]), ''],
    'cookie name with space' => [serialize(['method' => 'GET', 'cookies' => ['a b' => 'x']]), ''],
    'cookie name with [' => [serialize(['method' => 'GET', 'cookies' => ['a[b]' => 'x']]), ''],
    'int cookie names' => [serialize(['method' => 'GET', 'cookies' => [5 => 'x', '-7' => 'y', '07' => 'z']]), ''],
    'empty' => ['a:0:{}', ''],
    'count too big' => ['a:2:{s:6:"method";s:3:"GET";}', ''],
    'count too small' => ['a:1:{s:6:"method";s:3:"GET";s:1:"x";i:1;}', ''],
    'trailing bytes' => [serialize(['method' => 'GET']) . ' ', ''],
    'truncated' => [substr(serialize(['method' => 'GET']), 0, -1), ''],
] as $name => [$context, $body]) {
    echo "$name: ", $check($context, $body), "\n";
}
$r = request_read($hello, 'b');
var_dump($r->body, $r->query(), $r->path);
try {
    $r->method = 'POST';
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}

mt_srand(16);
$answered = 0;
foreach ([$hello, $full] as $seed) {
    for ($i = 0; $i < 10000; $i++) {
        $s = $seed;
        for ($k = mt_rand(1, 3); $k > 0; $k--) {
            $at = mt_rand(0, strlen($s));
            $s = match (mt_rand(0, 2)) {
                0 => substr($s, 0, $at) . substr($s, $at + 1),
                1 => substr($s, 0, $at) . chr(mt_rand(0, 255)) . substr($s, $at + 1),
                2 => substr($s, 0, $at) . '0123456789:;"{}aisb-%.['[mt_rand(0, 22)] . substr($s, $at),
            };
        }
        $r = $check($s, 'b');
        if ($r !== 'same' && $r !== 'null') {
            echo "$r for ", bin2hex($s), "\n";
        }
        $answered += $r === 'same' ? 1 : 0;
    }
}
echo 'mutations built by C: ', $answered > 100 ? 'many' : "few ($answered)", "\n";
?>
--EXPECT--
hello: same
full: same
method only: same
cookie with %: same
cookie name with .: same
body file: null
no method: null
int method: null
string headers: null
int parsed: null
not the subset: null
garbage: null
unknown keys: same
method last: same
parsed false: same
defaults spelled out: same
depth 16 in an unknown key: same
depth 16 in headers: same
depth 17 in an unknown key: null
depth 17 in headers: null
float in an unknown key: null
method twice: null
headers twice: null
header key twice: same
unknown key twice: same
body file of another type: null
array method: null
int uri: null
bool host: null
string parsed: null
bool form: null
int files: null
string cookies: null
array cookie: null
int cookie: null
cookie name with NUL: same
cookie name with space: same
cookie name with [: null
int cookie names: same
empty: null
count too big: null
count too small: null
trailing bytes: null
truncated: null
string(1) "b"
array(0) {
}
string(1) "/"
Cannot modify readonly property Ferry\Worker\Http\Request::$method
mutations built by C: many
