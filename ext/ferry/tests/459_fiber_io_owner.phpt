--TEST--
ferry: with fiber_io on, a hooked connection belongs to the job that used it first until that job ends (fiber_io_turn()): another job touching it meanwhile fails with a warning, even between the owner's operations; afterwards it changes hands
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{fiber_io_enable, fiber_io_turn};

fiber_io_enable(
    fn ($stream, bool $write, ?float $timeout) => Fiber::suspend('io'),
    fn (float $seconds) => Fiber::suspend('sleep') ?? true,
);
$server = stream_socket_server('tcp://127.0.0.1:0');
$shared = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$peer = stream_socket_accept($server);

// Job A writes on the shared connection, then waits on something else (its transaction is open).
$a = new Fiber(function () use ($shared) {
    fiber_io_turn(Fiber::getCurrent());
    var_dump(fwrite($shared, "A: BEGIN\n"));
    usleep(1000);
    var_dump(fwrite($shared, "A: COMMIT\n"));
    fiber_io_turn(Fiber::getCurrent()); // the job ends
});
// Job B, another request, uses the same connection meanwhile.
$b = new Fiber(function () use ($shared) {
    fiber_io_turn(Fiber::getCurrent());
    var_dump(fwrite($shared, "B: SELECT\n"));
    Fiber::suspend('later');
    var_dump(fwrite($shared, "B: SELECT again\n"));
    fiber_io_turn(Fiber::getCurrent());
});
var_dump($a->start());
var_dump($b->start());
$a->resume(true);
var_dump($a->isTerminated());
$b->resume();
var_dump($b->isTerminated());

// Code outside job Fibers (boot, the loop) is never refused.
var_dump(fwrite($shared, "main\n"));
// A Fiber never turned (an app's own) neither owns nor is refused.
$own = new Fiber(fn () => fwrite($shared, "app fiber\n"));
var_dump($own->start());
fclose($shared);
stream_set_blocking($peer, false);
echo stream_get_contents($peer);
?>
--EXPECTF--
int(9)
string(5) "sleep"

Warning: fwrite(): this connection is in use by another request still running (pool.fiber_io): keep one connection per request, or per Fiber in %s on line %d
bool(false)
string(5) "later"
int(10)
bool(true)
int(16)
bool(true)
int(5)
NULL
A: BEGIN
A: COMMIT
B: SELECT again
main
app fiber
