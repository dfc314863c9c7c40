--TEST--
ferry: http_decode_chunked() decodes in place, skips extensions and checks trailers as the front does, and refuses broken framing
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\http_decode_chunked;

$show = function (string $raw, int $max = 0) {
    $d = http_decode_chunked($raw, $max);
    echo $d['status'], ' consumed=', $d['consumed'], ' ', json_encode($d['body']), $d['trailer'] ? ' (in trailer)' : '', "\n";
};
$show("5;a=b\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nGET / HTTP/1.1");
$show("000000000000005\r\nhello\r\n0\r\n\r\n");
$show("5\r\nhel");
$show("5\r\nhello\r\n0\r\nX-T: 1\r\n");
$show("5\r\nhello\r\n0\r\nX-T");
echo "-- refused\n";
$show("0000000000000005\r\nhello\r\n0\r\n\r\n");
$show("z\r\n");
$show(" 5\r\nhello\r\n0\r\n\r\n");
$show("5\nhello\r\n0\r\n\r\n");
$show("5;a\nhello\r\n0\r\n\r\n");
$show("3\r\nhello\r\n0\r\n\r\n");
$show("5\r\nhello\n0\r\n\r\n");
$show("0\r\nHost: b\r\n\r\n");
$show("0\r\nX Y: b\r\n\r\n");
$show("0\r\nNoColon\r\nX: 1\r\n\r\n");
$show("401\r\n", 1024);
$show("200\r\n" . str_repeat('b', 512) . "\r\n201\r\n", 1024);

echo "-- any split\n";
$raw = "5;e\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX: y\r\n\r\nREST";
$ok = true;
for ($cut = 0; $cut <= strlen($raw); $cut++) {
    // no prefix of a valid body is refused: a cut only ever asks for more
    $a = http_decode_chunked(substr($raw, 0, $cut));
    $ok = $ok && in_array($a['status'], [0, 1], true);
}
echo $ok ? "no refusal at any cut\n" : "refused a prefix\n";
?>
--EXPECT--
0 consumed=42 "hello0123456789"
0 consumed=29 "hello"
1 consumed=6 "hel"
1 consumed=13 "hello" (in trailer)
1 consumed=13 "hello" (in trailer)
-- refused
400 consumed=15 ""
400 consumed=0 ""
400 consumed=0 ""
400 consumed=1 ""
400 consumed=3 ""
400 consumed=6 "hel"
400 consumed=8 "hello"
400 consumed=3 ""
400 consumed=3 ""
400 consumed=3 ""
413 consumed=5 ""
413 consumed=524 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
-- any split
no refusal at any cut
