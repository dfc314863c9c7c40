--TEST--
ferry: fiber_serve() runs Fiber mode's requests in C over a real relay (the unusual ones finished by php/worker), and fiber_body() and fiber_serve() refuse to run where they cannot
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
use Ferry\Worker\{Frame, FrameCodec, FrameParser, Worker};
use Ferry\Worker\Http\{HttpWorker, Request, Response};
use Ferry\Worker\Relay\StreamRelay;

try {
    \Ferry\Ext\fiber_body(new stdClass(), new stdClass());
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
$fiber = new Fiber(static function (): void {
    $h = new HttpWorker(new Worker(new StreamRelay(STDIN, STDOUT), fibers: true, token: ''));
    try {
        \Ferry\Ext\fiber_serve(new stdClass(), $h->worker()->session(), static fn () => null, STDIN, STDOUT, '', 1, false);
    } catch (Error $e) {
        echo $e->getMessage(), "\n";
    }
});
$fiber->start();
var_dump(\Ferry\Ext\fiber_served());

$context = static fn (string $path): string => serialize(['method' => 'GET', 'uri' => $path, 'path' => $path, 'headers' => ['Host' => ['x']]]);
$job = static fn (int $id, string $path): string => FrameCodec::job(strlen($context($path)), $id, $context($path));
$in = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
$out = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
// The PHP runner reads the first 64 KiB (the handshake, then jobs): the extension takes over
// from there.
$fill = '';
for ($i = 1; $i <= 600; $i++) {
    $fill .= $job(1000 + $i, '/fill');
}
file_put_contents($in, FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":1}') . $fill
    . $job(1, '/') . $job(2, '/echo') . $job(4, '/throw') . $job(5, '/'));
$via = [];
$http = new HttpWorker(new Worker(new StreamRelay(fopen($in, 'rb'), fopen($out, 'wb')), fibers: true, token: ''));
$http->run(static function (Request $r) use (&$via): Response|string {
    $c = in_array('Ferry\\Ext\\fiber_body', array_column(debug_backtrace(), 'function'), true) ? 'ext' : 'php';
    if ($r->path !== '/fill') {
        $via[] = "$r->path:$c";
    }
    return match ($r->path) {
        '/echo' => (static function (): string { echo 'echoed '; return 'html'; })(),
        '/throw' => throw new DomainException('thrown'),
        default => Response::text('plain'),
    };
});
echo implode(' ', $via), "\n";
$parser = new FrameParser();
$parser->push(file_get_contents($out));
$answers = [];
foreach ($parser->drain() as $frame) {
    $id = $frame->options[1] ?? 0;
    if ($id > 0 && $id < 1000) {
        $answers[$id] = substr($frame->payload, $frame->options[0]);
    }
}
ksort($answers);
var_dump($answers);
var_dump(\Ferry\Ext\fiber_served() >= 2);
unlink($in);
unlink($out);
?>
--EXPECTF--
Ferry\Ext\fiber_body() runs only in a Fiber that Ferry\Ext\fiber_serve() starts
Ferry\Ext\fiber_serve(): called inside a Fiber
int(0)
%A/:ext /echo:ext /throw:ext /:ext
array(4) {
  [1]=>
  string(5) "plain"
  [2]=>
  string(11) "echoed html"
  [4]=>
  string(22) "Internal Server Error
"
  [5]=>
  string(5) "plain"
}
bool(true)
