--TEST--
ferry: fiber_io over TLS, writes: a write larger than the socket takes waits on the loop for writability (OpenSSL's WANT_WRITE) and every byte arrives; a write whose timeout passes waits on the loop and returns short with timed_out set, as PHP's own TLS write does
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
require __DIR__ . '/fio_tls.inc';

$cert = fio_tls_cert();
$loop = new FioTlsLoop();
$ctx = stream_context_create(fio_tls_client_context());
$server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN,
    stream_context_create(['ssl' => ['local_cert' => $cert]]));
$addr = stream_socket_get_name($server, false);
// More than loopback's socket buffers hold on both sides together (Linux grows a sender's
// up to tcp_wmem's 4 MB).
$size = 16 << 20;

// The server reads nothing until the client waits to write, then drains everything.
$conn = null;
$up = false;
$got = 0;
$tick = function () use ($server, $loop, &$conn, &$up, &$got) {
    if ($conn === null && ($conn = @stream_socket_accept($server, 0)) !== false) {
        stream_set_blocking($conn, false);
    } elseif ($conn === false) {
        $conn = null;
    }
    if ($conn !== null && !$up) {
        $up = @stream_socket_enable_crypto($conn, true, STREAM_CRYPTO_METHOD_TLS_SERVER) === true;
    } elseif ($up && in_array('w:60', $loop->waits, true)) {
        while (($b = fread($conn, 1 << 16)) !== false && $b !== '') {
            $got += strlen($b);
        }
    }
};
$kept = null; // closed at the end only: closing with unread bytes (TLS tickets) resets
$f = $loop->fiber(function () use ($addr, $ctx, $size, &$kept) {
    $kept = $c = stream_socket_client("tls://$addr", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
    return fwrite($c, str_repeat('y', $size));
});
$loop->run([$f], [[]], $tick);
$end = microtime(true) + 5;
while ($got < $size && microtime(true) < $end) {
    $tick();
}
var_dump($f->getReturn() === $size, $got === $size);
echo "the write waited on the loop: ", in_array('w:60', $loop->waits, true) ? 'yes' : 'no', "\n";

// A server that never reads: the write's timeout passes, in a Fiber as outside one.
$silent = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN,
    stream_context_create(['ssl' => ['local_cert' => $cert]]));
$saddr = stream_socket_get_name($silent, false);
$accepted = [];
$write = function () use ($saddr, $ctx, $size) {
    $c = stream_socket_client("tls://$saddr", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
    stream_set_timeout($c, 0, 200000);
    $n = @fwrite($c, str_repeat('z', $size));
    return [$n === false || $n < $size, stream_get_meta_data($c)['timed_out']];
};
$handshake = function () use ($silent, &$accepted) {
    while (($s = @stream_socket_accept($silent, 0)) !== false) {
        stream_set_blocking($s, false);
        $accepted[] = [$s, false];
    }
    foreach ($accepted as $i => [$s, $up]) {
        if (!$up) {
            $accepted[$i][1] = @stream_socket_enable_crypto($s, true, STREAM_CRYPTO_METHOD_TLS_SERVER) === true;
        }
    }
};
$f = $loop->fiber($write);
$before = count($loop->waits);
$loop->run([$f], [[]], $handshake);
var_dump($f->getReturn());
echo "the timed out write waited on the loop: ", in_array('w:0.2', array_slice($loop->waits, $before), true) ? 'yes' : 'no', "\n";
?>
--EXPECT--
bool(true)
bool(true)
the write waited on the loop: yes
array(2) {
  [0]=>
  bool(true)
  [1]=>
  bool(true)
}
the timed out write waited on the loop: yes
