--TEST--
ferry: with fiber_io on, a stream another Fiber is waiting in fails the newcomer's read and write (a warning, false), and works again once the wait is over
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\fiber_io_enable;

$server = stream_socket_server('tcp://127.0.0.1:0');
// Streams opened before the hooks are on keep PHP's ops: this one is opened after.
fiber_io_enable(fn ($stream, bool $write, ?float $timeout) => Fiber::suspend('waiting'), fn (float $seconds) => false);
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s = stream_socket_accept($server);

$a = new Fiber(fn () => fgets($c));
var_dump($a->start());
$b = new Fiber(function () use ($c) {
    return [fgets($c), fwrite($c, "b\n")];
});
$b->start();
var_dump($b->getReturn());
fwrite($s, "for a\n");
$a->resume(true);
var_dump($a->getReturn());
$d = new Fiber(fn () => [fwrite($c, "d\n"), fgets($s)]);
$d->start();
var_dump($d->getReturn());
?>
--EXPECTF--
string(7) "waiting"

Warning: fgets(): another Fiber is waiting in this stream (pool.fiber_io): a connection serves one request at a time in %s on line %d

Warning: fwrite(): another Fiber is waiting in this stream (pool.fiber_io): a connection serves one request at a time in %s on line %d
array(2) {
  [0]=>
  bool(false)
  [1]=>
  bool(false)
}
string(6) "for a
"
array(2) {
  [0]=>
  int(2)
  [1]=>
  string(2) "d
"
}
