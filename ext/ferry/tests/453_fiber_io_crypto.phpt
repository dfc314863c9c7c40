--TEST--
ferry: a hooked tcp:// stream that turns TLS on (stream_socket_enable_crypto(), as mysqlnd's SSL does) goes back to PHP's own ops: OpenSSL's buffered bytes are invisible to a wait on the fd
--EXTENSIONS--
ferry
--SKIPIF--
<?php if (!extension_loaded('openssl')) echo 'skip openssl missing'; ?>
--FILE--
<?php
use function Ferry\Ext\fiber_io_enable;
$calls = 0;
fiber_io_enable(function ($s, $w, $t) use (&$calls) { $calls++; return Fiber::suspend('await'); }, fn ($x) => false);
$server = stream_socket_server('tcp://127.0.0.1:0');
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s = stream_socket_accept($server);
fwrite($s, "abcde"); // one bogus record header, no more: the fd has nothing left to read after the failed handshake
var_dump(@stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT));
stream_set_timeout($c, 0, 100000);
$f = new Fiber(function () use ($c) { return fgets($c); });
var_dump($f->start(), $f->isTerminated(), $calls);
?>
--EXPECT--
bool(false)
NULL
bool(true)
int(0)
