--TEST--
direct mode: an answer's context and body as the HTTP/1.1 bytes the front writes, and every mutated context either refused or a well-formed head
--EXTENSIONS--
ferry
--INI--
pcre.jit=0
--FILE--
<?php
require require __DIR__ . '/sdk.inc';

use Ferry\Worker\Http\Response;

function show(?string $bytes): void
{
    if ($bytes === null) {
        echo "refused\n";
        return;
    }
    $bytes = preg_replace_callback('/[\x80-\xff]/', static fn (array $m): string => sprintf('\\x%02x', ord($m[0])), $bytes);
    echo preg_replace('/^Date: [^|]*/m', 'Date: <now>', str_replace("\r\n", "|\n", $bytes)), "\n";
}

$hi = Response::text('hi')->addHeader('X-A', 'b')->addHeader('X-A', 'c')->cookie('s', 'v w', httpOnly: true);
show(Ferry\Ext\direct_answer_bytes($hi->context(), $hi->body));
show(Ferry\Ext\direct_answer_bytes($hi->context(), $hi->body, head: true));
$odd = (new Response(404, ['X-Raw' => "caf\xe9"], 'x'))->status(404, 'No Such Page')->header('Server', 'mine')->header('Connection', 'close');
show(Ferry\Ext\direct_answer_bytes($odd->context(), $odd->body));
show(Ferry\Ext\direct_answer_bytes('{"status":204,"headers":{}}', ''));
show(Ferry\Ext\direct_answer_bytes('{"status":103,"headers":{"Link":["</a.css>; rel=preload"]}}', ''));
foreach ([
    '{"status":200,"headers":{"X-A":["a\r\nEvil: 1"]}}',
    '{"status":200,"headers":{"X-A":["a\u0000b"]}}',
    '{"status":200,"headers":{"X A":["b"]}}',
    '{"status":101,"headers":{}}',
    '{"status":99,"headers":{}}',
    '{"status":200,"headers":{"X-A":"not a list"}}',
    '{"status":200,"headers":{}',
    '{"status":200,"reason":"a\nb","headers":{}}',
    '',
] as $bad) {
    echo json_encode($bad), ': ';
    show(Ferry\Ext\direct_answer_bytes($bad, ''));
}

// Mutations of real contexts: whatever comes out is refused or a well-formed head.
mt_srand(440);
$seeds = [$hi->context(), $odd->context(), Response::json(['a' => "\u{1F600}\"\\/"])->context(),
    Response::redirect('/x?y=1')->context(), '{"status":200,"headers":{"A":["\ud83d\ude00"]},"raw_headers":{"B":["AAEC"]}}'];
$refused = $heads = 0;
for ($i = 0; $i < 20000; $i++) {
    $c = $seeds[$i % count($seeds)];
    for ($k = mt_rand(1, 4); $k > 0; $k--) {
        $at = mt_rand(0, max(0, strlen($c) - 1));
        $c = match (mt_rand(0, 3)) {
            0 => substr($c, 0, $at) . chr(mt_rand(0, 255)) . substr($c, $at + 1),
            1 => substr($c, 0, $at) . substr($c, $at + 1),
            2 => substr($c, 0, $at) . ['\\', '"', '\u', '\ud800', '{', '[', ',', ':', "\r\n", '\\r\\n'][mt_rand(0, 9)] . substr($c, $at),
            3 => substr($c, 0, $at),
        };
    }
    $out = Ferry\Ext\direct_answer_bytes($c, 'body');
    if ($out === null) {
        $refused++;
        continue;
    }
    $heads++;
    $end = strpos($out, "\r\n\r\n");
    $lines = explode("\r\n", substr($out, 0, (int) $end));
    $ok = $end !== false && str_starts_with($out, 'HTTP/1.1 ') && !str_contains(substr($out, 0, $end), "\0");
    foreach ($lines as $n => $line) {
        $ok = $ok && !str_contains($line, "\r") && !str_contains($line, "\n")
            && ($n === 0 || preg_match('/^[!#$%&\'*+\-.^_`|~0-9A-Za-z]+: /', $line) === 1);
    }
    if (!$ok) {
        echo 'malformed head for ', json_encode($c, JSON_INVALID_UTF8_SUBSTITUTE), ': ', json_encode($out, JSON_INVALID_UTF8_SUBSTITUTE), "\n";
        break;
    }
}
echo $refused > 1000 && $heads > 1000 ? "mutations: both refused and answered\n" : "mutations: $refused refused, $heads answered\n";
?>
--EXPECT--
HTTP/1.1 200 OK|
Server: ferry|
Date: <now>|
Content-Type: text/plain; charset=utf-8|
Content-Length: 2|
X-A: b|
X-A: c|
Set-Cookie: s=v%20w; HttpOnly|
|
hi
HTTP/1.1 200 OK|
Server: ferry|
Date: <now>|
Content-Type: text/plain; charset=utf-8|
Content-Length: 2|
X-A: b|
X-A: c|
Set-Cookie: s=v%20w; HttpOnly|
|

HTTP/1.1 404 No Such Page|
Server: mine|
Date: <now>|
Content-Type: text/plain; charset=utf-8|
Content-Length: 1|
X-Raw: caf\xe9|
Connection: close|
|
x
HTTP/1.1 204 No Content|
Server: ferry|
Date: <now>|
|

HTTP/1.1 103 Early Hints|
Link: </a.css>; rel=preload|
|

"{\"status\":200,\"headers\":{\"X-A\":[\"a\\r\\nEvil: 1\"]}}": refused
"{\"status\":200,\"headers\":{\"X-A\":[\"a\\u0000b\"]}}": refused
"{\"status\":200,\"headers\":{\"X A\":[\"b\"]}}": refused
"{\"status\":101,\"headers\":{}}": refused
"{\"status\":99,\"headers\":{}}": refused
"{\"status\":200,\"headers\":{\"X-A\":\"not a list\"}}": refused
"{\"status\":200,\"headers\":{}": refused
"{\"status\":200,\"reason\":\"a\\nb\",\"headers\":{}}": refused
"": refused
mutations: both refused and answered
