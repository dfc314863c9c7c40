--TEST--
ferry: a hooked tcp:// stream that turns TLS on (stream_socket_enable_crypto(), as mysqlnd's SSL and STARTTLS do) in a Fiber waits for the server's handshake on the loop, and a handshake the server botches fails as PHP's does (false and OpenSSL's warning); outside a Fiber the handshake is PHP's own
--EXTENSIONS--
ferry
openssl
--FILE--
<?php
use function Ferry\Ext\fiber_io_enable;
$calls = [];
fiber_io_enable(function ($s, $w, $t) use (&$calls) { $calls[] = $w ? 'w' : 'r'; return Fiber::suspend('await'); }, fn ($x) => false);
$server = stream_socket_server('tcp://127.0.0.1:0');
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s = stream_socket_accept($server);

$f = new Fiber(function () use ($c) {
    $on = stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT);
    return [$on, error_get_last()['message'] ?? null];
});
var_dump($f->start(), $calls);
// The ClientHello is out, the Fiber waits for the answer; one bogus record header comes.
var_dump(strlen(fread($s, 4096)) > 0);
fwrite($s, "abcde");
$f->resume(true);
var_dump($f->getReturn());

// Outside a Fiber nothing is asked: PHP's own handshake, and its failure.
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s = stream_socket_accept($server);
fwrite($s, "abcde");
var_dump(@stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT), count($calls));
?>
--EXPECTF--
string(5) "await"
array(1) {
  [0]=>
  string(1) "r"
}
bool(true)

Warning: stream_socket_enable_crypto(): SSL operation failed with code 1. OpenSSL Error messages:
error:%s in %s on line %d
array(2) {
  [0]=>
  bool(false)
  [1]=>
  string(%d) "stream_socket_enable_crypto(): SSL operation failed with code 1. OpenSSL Error messages:
error:%s"
}
bool(false)
int(1)
