--TEST--
ferry: the status and phrase FPM would report (status line, Status header, Location, 304)
--EXTENSIONS--
ferry
--INI--
expose_php=0
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

ob_start();
$cases = [
    'status line with a phrase' => fn () => header('HTTP/1.1 404 No Such Page'),
    'status line without a phrase' => fn () => header('HTTP/1.0 503'),
    'status line on 200: FPM sends no phrase' => fn () => header('HTTP/1.1 200 Fine'),
    'http_response_code() after a status line: FPM still sends the line' => function () {
        header('HTTP/1.1 404 No Such Page');
        http_response_code(410);
    },
    'Status header' => fn () => header('Status: 201 Made It'),
    'Status header without a phrase' => fn () => header('Status: 202'),
    'Status header that is not a code' => fn () => header('Status: soon'),
    'status line wins over a Status header' => function () {
        header('Status: 201 Made It');
        header('HTTP/1.1 409 Conflict Here');
    },
    'Location' => fn () => header('Location: /next'),
    'Location keeps a 301' => function () {
        http_response_code(301);
        header('Location: /moved');
    },
    'WWW-Authenticate' => fn () => header('WWW-Authenticate: Basic realm="x"'),
    '304 has no Content-Type' => function () {
        http_response_code(304);
        header('Content-Type: text/plain');
        header('ETag: "a"');
    },
];
$out = [];
foreach ($cases as $name => $case) {
    request_begin();
    $case();
    $r = request_end();
    $out[] = sprintf("%s: %d%s %s", $name, $r['status'], isset($r['reason']) ? ' "' . $r['reason'] . '"' : '',
        json_encode($r['headers'], JSON_UNESCAPED_SLASHES));
}
ob_end_clean();
echo implode("\n", $out), "\n";
?>
--EXPECT--
status line with a phrase: 404 "No Such Page" {"Content-type":["text/html; charset=UTF-8"]}
status line without a phrase: 503 {"Content-type":["text/html; charset=UTF-8"]}
status line on 200: FPM sends no phrase: 200 {"Content-type":["text/html; charset=UTF-8"]}
http_response_code() after a status line: FPM still sends the line: 404 "No Such Page" {"Content-type":["text/html; charset=UTF-8"]}
Status header: 201 "Made It" {"Content-type":["text/html; charset=UTF-8"]}
Status header without a phrase: 202 {"Content-type":["text/html; charset=UTF-8"]}
Status header that is not a code: 200 {"Content-type":["text/html; charset=UTF-8"]}
status line wins over a Status header: 409 "Conflict Here" {"Content-type":["text/html; charset=UTF-8"]}
Location: 302 {"Location":["/next"],"Content-type":["text/html; charset=UTF-8"]}
Location keeps a 301: 301 {"Location":["/moved"],"Content-type":["text/html; charset=UTF-8"]}
WWW-Authenticate: 401 {"WWW-Authenticate":["Basic realm=\"x\""],"Content-type":["text/html; charset=UTF-8"]}
304 has no Content-Type: 304 {"ETag":["\"a\""]}
