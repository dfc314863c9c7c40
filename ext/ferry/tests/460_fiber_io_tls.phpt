--TEST--
ferry: fiber_io hooks TLS: a tls:// connect (connect, handshake) and a tcp:// stream turning TLS on wait on the loop, two Fibers read over TLS at once, bytes OpenSSL already decrypted are read without a wait, a read's timeout is PHP's, outside a Fiber nothing is asked, and a hooked TLS stream is still a session ext/openssl resumes from
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
require __DIR__ . '/fio_tls.inc';

$cert = fio_tls_cert();
$loop = new FioTlsLoop();
// One 16 KB TLS record after the line: the client's first read (8 KB) leaves the rest inside
// OpenSSL with nothing left on the fd, which a wait for readability would sleep through.
$gate = new FioTlsGate($cert, 2, fn (string $line) => "hello $line\n" . str_repeat('x', 16000));
$ctx = stream_context_create(fio_tls_client_context());

$client = function (string $name, bool $starttls) use ($gate, $ctx) {
    if ($starttls) {
        $c = stream_socket_client("tcp://{$gate->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
        $on = stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT);
    } else {
        $c = stream_socket_client("tls://{$gate->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
        $on = $c !== false;
    }
    fwrite($c, "$name\n");
    $line = fgets($c);
    $big = '';
    while (strlen($big) < 16000 && ($b = fread($c, 16000 - strlen($big))) !== false && $b !== '') {
        $big .= $b;
    }
    stream_set_timeout($c, 0, 100000);
    $late = fgets($c); // nothing comes: PHP's own timeout answer
    $meta = stream_get_meta_data($c);
    return [$on, $line, strlen($big), $late, $meta['timed_out'], $meta['stream_type'], isset($meta['crypto']['protocol'])];
};
$fibers = ['a' => $loop->fiber($client), 'b' => $loop->fiber($client)];
$loop->run($fibers, ['a' => ['a', false], 'b' => ['b', true]], [$gate, 'tick']);
foreach ($fibers as $f) {
    var_dump($f->getReturn());
}
$reads = array_values(array_filter($loop->waits, fn ($w) => $w[0] === 'r'));
echo "both handshakes and reads waited on the loop: ", count($reads) >= 4 ? 'yes' : 'no', "\n";
echo "the read timeout waited on the loop: ", in_array('r:0.1', $loop->waits, true) ? 'yes' : 'no', "\n";

// Outside a Fiber, and in a Fiber the loop does not own, nothing is asked: PHP's own code.
$gate2 = new FioTlsGate($cert, 1, fn (string $line) => "again $line\n");
$f = $loop->fiber(function () use ($gate2, $ctx) {
    return stream_socket_client("tls://{$gate2->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
});
$loop->run([$f], [[]], [$gate2, 'tick']);
$c = $f->getReturn();
fwrite($c, "main\n");
$before = count($loop->waits);
while (!$gate2->answered) {
    $gate2->tick();
}
$l = fgets($c);
$foreign = new Fiber(fn () => [fwrite($c, "x"), stream_set_timeout($c, 0, 50000), fgets($c)]);
var_dump($l, $foreign->start(), $foreign->getReturn()[2], count($loop->waits) === $before);

// A hooked TLS stream given as the session to resume from is still one ext/openssl accepts.
$f = $loop->fiber(function () use ($gate2, $ctx, $c) {
    $c2 = stream_socket_client("tcp://{$gate2->addr}", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $ctx);
    return stream_socket_enable_crypto($c2, true, STREAM_CRYPTO_METHOD_TLS_CLIENT, $c);
});
$loop->run([$f], [[]], [$gate2, 'tick']);
var_dump($f->getReturn());
?>
--EXPECT--
array(7) {
  [0]=>
  bool(true)
  [1]=>
  string(8) "hello a
"
  [2]=>
  int(16000)
  [3]=>
  bool(false)
  [4]=>
  bool(true)
  [5]=>
  string(14) "tcp_socket/ssl"
  [6]=>
  bool(true)
}
array(7) {
  [0]=>
  bool(true)
  [1]=>
  string(8) "hello b
"
  [2]=>
  int(16000)
  [3]=>
  bool(false)
  [4]=>
  bool(true)
  [5]=>
  string(14) "tcp_socket/ssl"
  [6]=>
  bool(true)
}
both handshakes and reads waited on the loop: yes
the read timeout waited on the loop: yes
string(11) "again main
"
NULL
bool(false)
bool(true)
bool(true)
