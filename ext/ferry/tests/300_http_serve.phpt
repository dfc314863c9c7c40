--TEST--
ferry: http_serve() answers the usual request in C, hands everything else to php/worker, and refuses objects of another shape
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
use Ferry\Worker\{Frame, FrameCodec, Worker};
use Ferry\Worker\Http\{HttpWorker, Request, Response};
use Ferry\Worker\Relay\StreamRelay;

$context = static fn (string $path): string => serialize(['method' => 'GET', 'uri' => $path, 'path' => $path, 'headers' => ['Host' => ['x']]]);
$job = static fn (int $id, string $path): string => FrameCodec::job(strlen($context($path)), $id, $context($path));
$in = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
$out = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
// The PHP loop reads the first 64 KiB (the handshake, then jobs): the extension's loop
// takes over from there, the frame cut at that boundary included.
$fill = '';
for ($i = 1; $i <= 600; $i++) {
    $fill .= $job(1000 + $i, '/fill');
}
file_put_contents($in, FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":1}') . $fill
    . $job(1, '/') . $job(2, '/php-header') . $job(3, '/throw') . $job(4, '/')
    . FrameCodec::encode(Frame::CONTROL, [], '', Frame::PING) . $job(5, '/'));
$via = [];
$handler = static function (Request $r) use (&$via): Response {
    $via[$r->path][] = in_array('Ferry\Ext\http_serve', array_column(debug_backtrace(), 'function'), true) ? 'C' : 'PHP';
    if ($r->path === '/php-header') {
        header('X-Php: yes');
    }
    if ($r->path === '/throw') {
        throw new RuntimeException('no');
    }
    return Response::text("hi {$r->path}");
};
Worker::setLogger(static function (string $m): void {});
$relay = new StreamRelay(fopen($in, 'rb'), fopen($out, 'wb'));
$worker = new Worker($relay, token: '');
(new HttpWorker($worker))->run($handler);

[$frames] = Ferry\Ext\frames_parse(file_get_contents($out));
foreach ($frames as [$flags, $options, $payload, $stream]) {
    if ($flags & Frame::CONTROL) {
        printf("control %s%s\n", $stream & Frame::PONG ? 'pong' : 'flags ' . $flags, $payload === '' ? '' : " $payload");
        continue;
    }
    if ($options[1] > 1000) {
        $filled = ($filled ?? 0) + 1;
        continue;
    }
    $meta = json_decode(substr($payload, 0, $options[0]), true);
    printf("%d: %d %s %s\n", $options[1], $meta['status'], json_encode($meta['headers']), substr($payload, $options[0], 30));
}
$fillVia = array_count_values($via['/fill']);
unset($via['/fill']);
printf("%d fill answers, %s\n", $filled, $fillVia['C'] > 100 && $fillVia['PHP'] > 100 ? 'the first ones from the PHP loop, the rest from C' : json_encode($fillVia));
echo json_encode($via), "\n";
unlink($in);
unlink($out);

try {
    $o = new stdClass();
    Ferry\Ext\http_serve($o, fn () => 1, $o, STDIN, STDOUT, '');
} catch (Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
?>
--EXPECTF--
control flags 9 {"pid":%d,"token":""}
1: 200 {"Content-Type":["text\/plain; charset=utf-8"]} hi /
2: 200 {"Content-Type":["text\/plain; charset=utf-8"],"X-Php":["yes"]} hi /php-header
3: 500 {"Content-Type":["text\/plain; charset=utf-8"]} Internal Server Error

4: 200 {"Content-Type":["text\/plain; charset=utf-8"]} hi /
control pong
5: 200 {"Content-Type":["text\/plain; charset=utf-8"]} hi /
600 fill answers, the first ones from the PHP loop, the rest from C
{"\/":["C","C","PHP"],"\/php-header":["C"],"\/throw":["C"]}
Error: Ferry\Ext\http_serve(): stdClass declares no worker contract version (an integer CONTRACT_VERSION) and this ext/ferry speaks version 2: load the ext/ferry built from the same Ferry release as php/worker
