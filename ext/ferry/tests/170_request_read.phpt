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
    'cookie to decode' => [serialize(['method' => 'GET', 'cookies' => ['a' => 'x%20y']]), ''],
    'cookie name to mangle' => [serialize(['method' => 'GET', 'cookies' => ['a.b' => 'x']]), ''],
    'body file' => [serialize(['method' => 'GET', 'body_file' => '/tmp/b']), ''],
    'no method' => [serialize(['uri' => '/']), ''],
    'int method' => [serialize(['method' => 5]), ''],
    'string headers' => [serialize(['method' => 'GET', 'headers' => 'x']), ''],
    'int parsed' => [serialize(['method' => 'GET', 'parsed' => 1]), ''],
    'not the subset' => [serialize(['method' => 'GET', 'x' => 1.5]), ''],
    'garbage' => ['nope', ''],
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
cookie to decode: null
cookie name to mangle: null
body file: null
no method: null
int method: null
string headers: null
int parsed: null
not the subset: null
garbage: null
string(1) "b"
array(0) {
}
string(1) "/"
Cannot modify readonly property Ferry\Worker\Http\Request::$method
mutations built by C: many
