--TEST--
ferry: the request path reads one way: http_serve() returns a job it does not finish to php/worker with its outcome, shares its read-ahead through the session, and takes no resume callable
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
use Ferry\Worker\{Frame, FrameCodec, Job, Payload, Worker};
use Ferry\Worker\Http\{HttpWorker, Request, Response};
use Ferry\Worker\Internal\Native\NativeLoop;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Relay\StreamRelay;

// No callable into the SDK's runner, and no static to fetch the read-ahead from.
$f = new ReflectionFunction('Ferry\Ext\http_serve');
// Printed once at the end: from the handshake on, output outside a job goes to STDERR.
$report = 'http_serve(' . implode(', ', array_map(fn ($p) => $p->getType() . ' $' . $p->getName(), $f->getParameters())) . '): ' . $f->getReturnType() . "\n";
$report .= 'http_serve_unread() ' . (function_exists('Ferry\Ext\http_serve_unread') ? 'exists' : 'is gone') . "\n";

$context = static fn (string $path): string => serialize(['method' => 'GET', 'uri' => $path, 'path' => $path, 'headers' => ['Host' => ['x']]]);
$job = static fn (int $id, string $path): string => FrameCodec::job(strlen($context($path)), $id, $context($path));
$in = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
$out = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
$called = static fn (): string => in_array('Ferry\Ext\http_serve', array_column(debug_backtrace(), 'function'), true) ? 'C' : 'PHP';
$lines = [];

// A whole worker: the PHP loop reads the first 64 KiB, the extension the jobs behind them.
// Job 2's answer is a stream, finished in PHP once http_serve() has returned it; while its
// parts go out, the worker looks for a STOP and takes what the extension read behind job 2.
// A socket, not a file: a file's end would read as the server gone while the stream looks.
$fill = '';
for ($i = 1; $i <= 600; $i++) {
    $fill .= $job(1000 + $i, '/fill');
}
[$server, $relay] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
fwrite($server, FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":1}') . $fill
    . $job(1, '/') . $job(2, '/stream') . $job(3, '/') . $job(4, '/')
    . FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"stop":true}'));
$handler = static function (Request $r) use (&$lines, $called) {
    if ($r->path === '/stream') {
        $lines[] = "handler of /stream from {$called()}";
        return Response::stream((static function () use (&$lines, $called) {
            yield 'one ';
            $lines[] = "its parts made from {$called()}";
            yield 'two';
        })());
    }
    if ($r->path !== '/fill') {
        $lines[] = "handler of {$r->path} from {$called()}";
    }
    return Response::text("hi {$r->path}");
};
Worker::setLogger(static function (string $m): void {});
(new HttpWorker(new Worker(new StreamRelay($relay, fopen($out, 'wb')), token: '')))->run($handler);
[$frames] = Ferry\Ext\frames_parse(file_get_contents($out));
$answers = [];
foreach ($frames as [$flags, $options, $payload, $stream]) {
    if (!($flags & Frame::CONTROL) && $options[1] < 1000) {
        $answers[] = $options[1] . ($stream & Frame::STREAM ? ' part' : '') . ': ' . substr($payload, $options[0]);
    }
}
$report .= implode("\n", $lines) . "\n" . implode("\n", $answers) . "\n";

// Called directly: the job whose handler threw comes back with its outcome in $handed, and
// the job read behind it is in the session's $readAhead, not served.
file_put_contents($in, $job(7, '/throw') . $job(8, '/'));
file_put_contents($out, '');
$session = new WorkerSession(new StreamRelay($r = fopen($in, 'rb'), $w = fopen($out, 'wb')), false, 1, new FrameCodec(), null);
$session->capture->install();
$status = Ferry\Ext\http_serve($session, static function (Request $r): never {
    throw new RuntimeException("no {$r->path}");
}, new Job(new Payload(), $session->capture), $r, $w, '');
[$id, $ctx, $body, $result, $php, $error] = $session->handed;
$rest = $session->takeReadAhead();
$report .= json_encode([
    'status' => $status === NativeLoop::RESUME ? 'RESUME' : $status,
    'handed' => [$id, unserialize($ctx)['path'], $body, $result, $php, get_class($error) . ': ' . $error->getMessage()],
    'read ahead, not served' => $rest === $job(8, '/'),
    'written' => file_get_contents($out),
]) . "\n";
// A copy of the shared buffer that PHP keeps is never written to: past the first 64 KiB the
// loop moves and reads its bytes in a buffer of its own.
$fill = '';
for ($i = 1; $i <= 700; $i++) {
    $fill .= $job(2000 + $i, '/k');
}
file_put_contents($in, $job(9, '/keep') . $fill);
$session = new WorkerSession(new StreamRelay($r = fopen($in, 'rb'), $w = fopen($out, 'wb')), false, 1, new FrameCodec(), null);
$session->capture->install();
$kept = null;
$snapshot = '';
$served = 0;
$status = Ferry\Ext\http_serve($session, static function (Request $r) use ($session, &$kept, &$snapshot, &$served): Response {
    $served++;
    if ($kept === null) {
        $kept = $session->readAhead;
        $snapshot = substr($kept, 0, $session->readAheadEnd);
    }
    return Response::text('k');
}, new Job(new Payload(), $session->capture), $r, $w, '');
$report .= json_encode([
    'status' => $status === NativeLoop::CLOSED ? 'CLOSED' : $status,
    'served' => $served,
    'kept copy unchanged' => substr($kept, 0, strlen($snapshot)) === $snapshot,
    'read again after the copy' => strlen($snapshot) === 65536,
]) . "\n";
echo $report;
unlink($in);
unlink($out);
?>
--EXPECT--
http_serve(object $session, Closure $handler, object $placeholder,  $in,  $out, string $read): int
http_serve_unread() is gone
handler of / from C
handler of /stream from C
its parts made from PHP
handler of / from PHP
handler of / from PHP
1: hi /
2 part: one 
2 part: two
2: 
3: hi /
4: hi /
{"status":"RESUME","handed":[7,"\/throw","",null,null,"RuntimeException: no \/throw"],"read ahead, not served":true,"written":""}
{"status":"CLOSED","served":701,"kept copy unchanged":true,"read again after the copy":true}
