--TEST--
ferry: http_parse_head() splits a head into method, target, path, query, host and fields, and refuses what the front refuses with its status
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\http_parse_head;

$limits = ['max_head' => 4096, 'max_headers' => 20, 'max_body' => 1024];
$show = function (string $raw) use ($limits): void {
    $r = http_parse_head($raw, $limits);
    if ($r['status'] !== 0) {
        echo $r['status'], ' ', $r['error'] ?? '-', ' consumed=', $r['consumed'], "\n";
        return;
    }
    echo json_encode([$r['method'], $r['target'], $r['path'], $r['query'], $r['host'], $r['minor'], $r['consumed'],
        $r['content_length'], $r['chunked'], $r['keep_alive'], $r['expect_continue'], $r['fields']], JSON_UNESCAPED_SLASHES), "\n";
};

echo "-- served\n";
$show("GET /a/b?c=1&d HTTP/1.1\r\nHost: Example.COM:8080\r\nUser-Agent: t\r\n\r\nNEXT");
$show("\r\n\nPOST /p HTTP/1.0\r\nConnection: x, Keep-Alive\r\nContent-Length: 0012\r\n\r\n");
$show("PUT http://B.example/x?q HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\nExpect: 100-continue\r\n\r\n");
$show("GET https://b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
$show("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
$show("GET /x HTTP/1.1\nHost: a\nX:  v \t\n\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nX-F: one\r\n   two\r\n\tthree\r\n\r\n");

echo "-- need more\n";
foreach (["", "GET", "GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r", "\r\n"] as $raw) {
    $show($raw);
}

echo "-- refused\n";
$show("GET /x HTTP/9.9\r\nHost: a\r\n\r\n");
$show("GET /x HTTP/1.1\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n");
$show("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n");
$show("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n");
$show("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n");
$show("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n");
$show("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost : a\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n");
$show("GET /../x HTTP/1.1\r\nHost: a\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a..b\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\n" . str_repeat("X: 1\r\n", 20) . "\r\n");
$show("GET /" . str_repeat('a', 4096) . " HTTP/1.1\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nX-F: a \r\n b \r\nY: c\r\n\r\n");
$show("GET /x HTTP/1.1\r\n X: a\r\nHost: a\r\n\r\n");
$show("GET /x HTTP/1.1\r\nHost: a\r\nTrailer: Host\r\n\r\n");

echo "-- slots run out\n";
$r = http_parse_head("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nY: 2\r\n\r\n", ['slots' => 2]);
echo $r['status'], ' ', $r['error'], ' ', count($r['fields']), "\n";
?>
--EXPECT--
-- served
["GET","/a/b?c=1&d","/a/b","c=1&d","Example.COM:8080",1,66,-1,false,true,false,[["Host","Example.COM:8080"],["User-Agent","t"]]]
["POST","/p","/p",null,null,0,72,12,false,true,false,[["Connection","x, Keep-Alive"],["Content-Length","0012"]]]
["PUT","http://B.example/x?q","/x","q","B.example",1,96,-1,true,true,true,[["Host","a"],["Transfer-Encoding","Chunked"],["Expect","100-continue"]]]
["GET","https://b","/",null,"b",1,54,-1,false,false,false,[["Host","a"],["Connection","close"]]]
["OPTIONS","*","*",null,"a",1,31,-1,false,true,false,[["Host","a"]]]
["GET","/x","/x",null,"a",1,33,-1,false,true,false,[["Host","a"],["X","v"]]]
400 obsolete line folding in a header field consumed=54
-- need more
1 - consumed=0
1 - consumed=0
1 - consumed=0
1 - consumed=0
1 - consumed=0
-- refused
505 HTTP version not supported consumed=28
400 missing required Host header consumed=19
400 more than one Host header consumed=37
405 CONNECT is not supported consumed=39
400 both Content-Length and Transfer-Encoding consumed=76
413 request body larger than max_body_size consumed=51
400 duplicate Content-Length header consumed=67
400 unsupported Transfer-Encoding consumed=63
400 invalid header field name consumed=29
400 a header line without a colon consumed=37
400 invalid header value consumed=36
400 invalid request target consumed=31
400 invalid Host header consumed=31
431 too many request header fields consumed=148
431 request headers larger than max_header_size consumed=0
400 invalid header field name consumed=48
400 invalid header field name consumed=35
400 forbidden field named in Trailer consumed=43
-- slots run out
431 too many request header fields 2
