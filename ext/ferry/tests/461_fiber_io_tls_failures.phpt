--TEST--
ferry: fiber_io over TLS fails as PHP does: a handshake the server never answers times out with PHP's warnings (waiting on the loop, not in PHP's poll), a cancelled TLS read shuts its connection, and a second Fiber on a TLS stream in use gets the shared-connection error
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
require __DIR__ . '/fio_tls.inc';

$cert = fio_tls_cert();
$loop = new FioTlsLoop();
$ctx = stream_context_create(fio_tls_client_context());
$errors = [];
set_error_handler(function ($no, $msg) use (&$errors) {
    if (error_reporting() & $no) {
        $errors[] = $msg; // not the @-silenced ones (the test server's accepts)
    }
    return true;
});

// A server that accepts (the kernel's backlog) but never speaks TLS.
$silent = stream_socket_server('tcp://127.0.0.1:0');
$addr = stream_socket_get_name($silent, false);
$connect = fn () => stream_socket_client("tls://$addr", $errno, $errstr, 0.3, STREAM_CLIENT_CONNECT, $ctx);

$t = microtime(true);
var_dump($connect());
$php = $errors;
$errors = [];
$f = $loop->fiber($connect);
$loop->run([$f], [[]], fn () => null);
var_dump($f->getReturn());
echo "same warnings as PHP's own: ", $errors === $php ? 'yes' : 'no: ' . json_encode([$php, $errors]), "\n";
echo implode("\n", $php), "\n";
echo "the handshake waited on the loop: ", in_array('r:0.3', $loop->waits, true) ? 'yes' : 'no: ' . json_encode($loop->waits), "\n";
$errors = [];

// Cancelled while waiting for the answer: the exception reaches the app, the connection is
// shut down rather than left half-read.
$gate = new FioTlsGate($cert, 99, fn (string $line) => "never\n");
$f = $loop->fiber(function () use ($gate, $ctx) {
    $c = stream_socket_client("tls://{$gate->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
    fwrite($c, "wait\n");
    try {
        return fgets($c);
    } catch (RuntimeException $e) {
        return [$e->getMessage(), feof($c)];
    }
});
$thrown = false;
$loop->run([$f], [[]], function () use ($gate, $f, &$thrown) {
    $gate->tick();
    if (!$thrown && $gate->lines() === 1 && $f->isSuspended()) {
        $thrown = true;
        $f->throw(new RuntimeException('cancelled'));
    }
});
var_dump($f->getReturn());

// Another Fiber reading a TLS stream one is waiting in: an error, not interleaved bytes.
$gate = new FioTlsGate($cert, 1, fn (string $line) => "hello $line\n");
$shared = null;
$a = $loop->fiber(function () use ($gate, $ctx, &$shared) {
    $shared = stream_socket_client("tls://{$gate->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
    fwrite($shared, "a\n");
    return fgets($shared);
});
$b = null;
$loop->run([$a], [[]], function () use ($gate, $loop, &$b, &$shared) {
    $gate->tick();
    if ($b === null && $gate->lines() === 1) {
        $b = $loop->fiber(fn () => fgets($shared));
        $b->start();
    }
});
var_dump($a->getReturn(), $b->getReturn(), $errors);
?>
--EXPECTF--
bool(false)
bool(false)
same warnings as PHP's own: yes
stream_socket_client(): SSL: Handshake timed out
stream_socket_client(): Failed to enable crypto
stream_socket_client(): Unable to connect to tls://127.0.0.1:%d (Unknown error)
the handshake waited on the loop: yes
array(2) {
  [0]=>
  string(9) "cancelled"
  [1]=>
  bool(true)
}
string(8) "hello a
"
bool(false)
array(1) {
  [0]=>
  string(%d) "fgets(): another Fiber is waiting in this stream (pool.fiber_io): a connection serves one request at a time"
}
