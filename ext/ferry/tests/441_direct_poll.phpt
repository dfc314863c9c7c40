--TEST--
direct mode with Fibers: direct_poll() hands whole requests of every connection, one at a time per connection, and direct_answer_to() writes each answer to its own client by job id
--EXTENSIONS--
ferry
--INI--
pcre.jit=0
--FILE--
<?php
require require __DIR__ . '/sdk.inc';

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Http\Response;

$server = stream_socket_server('tcp://127.0.0.1:0');
// its descriptor: the process's only socket
$fd = (int) current(array_filter(scandir('/proc/self/fd'), static fn (string $f): bool => str_starts_with((string) @readlink("/proc/self/fd/$f"), 'socket:')));
$addr = 'tcp://' . stream_socket_get_name($server, false);

$epoll = Ferry\Ext\direct_poll_fd($fd, ['max_header_size' => 8192, 'max_body_size' => 1024, 'idle_timeout_ms' => 5000]);
var_dump($epoll > 2);

// Polls until $n requests came, and names them by target.
function poll(int $n, bool $drain = false): array
{
    $got = [];
    for ($i = 0; $i < 200 && count($got) < $n; $i++) {
        [$jobs, $flags] = Ferry\Ext\direct_poll($drain, 8);
        foreach ($jobs as [$id, $context, $body]) {
            $got[unserialize($context)['uri']] = $id;
        }
        if (count($got) < $n) {
            usleep(5000);
        }
    }
    ksort($got);
    return $got;
}

function answer(int $id, string $text): string
{
    $r = Response::text($text);
    $context = $r->context();
    return FrameCodec::encode(Frame::CODEC_RAW, [strlen($context), $id], $context . $r->body);
}

function read_answers($client, int $n): void
{
    $all = '';
    while (substr_count($all, 'HTTP/1.1 ') < $n || !preg_match('/\r\n\r\n[^\r\n]*$/', $all)) {
        $all .= fread($client, 8192);
    }
    preg_match_all('/HTTP\/1\.1 (\d+).*?\r\n\r\n([^H]*)/s', $all, $m, PREG_SET_ORDER);
    foreach ($m as [, $status, $body]) {
        echo "  $status $body\n";
    }
}

$one = stream_socket_client($addr);
$two = stream_socket_client($addr);
fwrite($one, "GET /a HTTP/1.1\r\nHost: x\r\nCookie: c=1\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
fwrite($two, "GET /c HTTP/1.1\r\nHost: x\r\n\r\n");
$jobs = poll(2);
echo "handed: ", implode(' ', array_keys($jobs)), "\n"; // /b waits behind /a
var_dump(min($jobs) >= 0x80000000);

// /c first; a relay job's answer and a control frame in the same write go to $control.
$relay = answer(7, 'relayed') . FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pong":true}');
$control = null;
var_dump(Ferry\Ext\direct_answer_to(answer($jobs['/c'], 'c') . $relay, $control), $control === $relay);
echo "two:\n";
read_answers($two, 1);
Ferry\Ext\direct_done($jobs['/c']);

Ferry\Ext\direct_answer_to(answer($jobs['/a'], 'a'), $control);
var_dump($control);
Ferry\Ext\direct_done($jobs['/a']);
$next = poll(1);
echo "handed: ", implode(' ', array_keys($next)), "\n";
Ferry\Ext\direct_answer_to(answer($next['/b'], 'b'), $control);
Ferry\Ext\direct_done($next['/b']);
echo "one:\n";
read_answers($one, 2);

// A client that leaves while its request runs: its streamed answer's parts fail, then
// they are dropped and its id reported (a STOP for the stream).
fwrite($two, "GET /d HTTP/1.1\r\nHost: x\r\n\r\n");
$d = poll(1)['/d'];
fclose($two);
$head = Response::text('')->context();
$gone = Ferry\Ext\direct_answer_to(FrameCodec::encode(Frame::CODEC_RAW, [strlen($head), $d], $head . 'part', Frame::STREAM), $control);
for ($i = 0; $i < 100 && $gone !== [$d]; $i++) {
    usleep(5000);
    Ferry\Ext\direct_poll(false, 8);
    $gone = Ferry\Ext\direct_answer_to(FrameCodec::encode(Frame::CODEC_RAW, [0, $d], 'part', Frame::STREAM), $control);
}
var_dump($gone === [$d]);
Ferry\Ext\direct_done($d);
Ferry\Ext\direct_done(12345); // unknown: nothing to do

// Stopping: the idle connection is closed once its grace ends, then nothing is left.
fclose($one);
for ($i = 0; $i < 400; $i++) {
    [$jobs, $flags] = Ferry\Ext\direct_poll(true, 8);
    if ($flags & 1) {
        break;
    }
    usleep(5000);
}
var_dump($flags & 1);
try {
    Ferry\Ext\direct_answer_to("\x11", $control);
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
bool(true)
handed: /a /c
bool(true)
array(0) {
}
bool(true)
two:
  200 c
string(0) ""
handed: /b
one:
  200 a
  200 b
bool(true)
int(1)
Ferry\Ext\direct_answer_to(): not a whole frame
