--TEST--
ferry: a tls:// connect to a host name in a Fiber (through the tcp hook's connect: lookup off the loop, each address in turn, tests/455 and 456) connects, handshakes on the loop and talks
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
require __DIR__ . '/fio_tls.inc';

$cert = fio_tls_cert();
$loop = new FioTlsLoop();
$gate = new FioTlsGate($cert, 1, fn (string $line) => "hello $line\n");
$ctx = stream_context_create(fio_tls_client_context());
$port = substr($gate->addr, strrpos($gate->addr, ':') + 1);
// /etc/hosts maps localhost to 127.0.0.1 (and maybe ::1, refused: the next address is tried).
$client = function () use ($port, $ctx) {
    $c = stream_socket_client("tls://localhost:$port", $errno, $errstr, 5, STREAM_CLIENT_CONNECT, $ctx);
    if ($c === false) {
        return "connect failed: $errno $errstr";
    }
    fwrite($c, "by name\n");
    return [fgets($c), isset(stream_get_meta_data($c)['crypto']['protocol'])];
};
$fibers = ['a' => $loop->fiber($client)];
$loop->run($fibers, ['a' => []], [$gate, 'tick']);
var_dump($fibers['a']->getReturn());
echo "waited on the loop: ", count($loop->waits) > 0 ? 'yes' : 'no', "\n";
?>
--EXPECT--
array(2) {
  [0]=>
  string(14) "hello by name
"
  [1]=>
  bool(true)
}
waited on the loop: yes
