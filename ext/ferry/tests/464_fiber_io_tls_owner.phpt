--TEST--
ferry: a hooked TLS connection belongs to the job that used it first until that job ends, as a tcp one does: another job's write meanwhile fails with a warning
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
use function Ferry\Ext\fiber_io_turn;

require __DIR__ . '/fio_tls.inc';

$cert = fio_tls_cert();
$loop = new FioTlsLoop();
$gate = new FioTlsGate($cert, 1, fn (string $line) => "ok\n");
$ctx = stream_context_create(fio_tls_client_context());
$shared = null;
$connect = $loop->fiber(function () use (&$shared, $gate, $ctx) {
    $shared = stream_socket_client("tls://{$gate->addr}", $errno, $errstr, 5, STREAM_CLIENT_CONNECT, $ctx);
    return $shared !== false;
});
$loop->run(['c' => $connect], ['c' => []], [$gate, 'tick']);
var_dump($connect->getReturn());

[$quiet] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$a = $loop->fiber(function () use (&$shared, $quiet) {
    fiber_io_turn(Fiber::getCurrent());
    $first = fwrite($shared, "a\n");
    Fiber::suspend([$quiet, false, 0.05]); // the owner waits on something else
    $line = fgets($shared);
    fiber_io_turn(Fiber::getCurrent());
    return [$first, $line];
});
$b = $loop->fiber(function () use (&$shared) {
    fiber_io_turn(Fiber::getCurrent());
    $w = fwrite($shared, "b\n");
    fiber_io_turn(Fiber::getCurrent());
    return $w;
});
$loop->run(['a' => $a, 'b' => $b], ['a' => [], 'b' => []], [$gate, 'tick']);
var_dump($a->getReturn(), $b->getReturn());
?>
--EXPECTF--
bool(true)

Warning: fwrite(): this connection is in use by another request still running (pool.fiber_io): keep one connection per request, or per Fiber in %s on line %d
array(2) {
  [0]=>
  int(2)
  [1]=>
  string(3) "ok
"
}
bool(false)
