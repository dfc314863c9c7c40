--TEST--
ferry: with fiber_io on, fclose() of a stream another Fiber waits in closes it for everyone at once, wakes the waiter (its read or write fails: a warning, false) and frees the stream only once the waiter left it
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{fiber_io_enable, fiber_io_disable};

$fds = fn () => count(scandir('/proc/self/fd'));
$server = stream_socket_server('tcp://127.0.0.1:0');
fiber_io_enable(fn ($stream, bool $write, ?float $timeout) => Fiber::suspend($stream), fn (float $seconds) => false);
$before = $fds();

// The loop's side of a wait: the stream it watches (a dup of the fd) turns ready.
$ready = function ($watch, bool $write): int {
    $r = $write ? [] : [$watch];
    $w = $write ? [$watch] : [];
    $e = null;
    return stream_select($r, $w, $e, 2);
};

foreach (['read', 'write'] as $op) {
    echo "-- $op\n";
    $c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
    $s = stream_socket_accept($server);
    $a = new Fiber(function () use ($c, $op) {
        if ($op === 'read') {
            return fgets($c);
        }
        // Fills the socket's buffers, so the write waits for room.
        $chunk = str_repeat('x', 1 << 20);
        for ($sent = 0; $sent < 64 << 20; $sent += $n) {
            $n = fwrite($c, $chunk);
            if ($n === false || $n === 0) {
                return $n;
            }
        }
        return 'never waited';
    });
    $watch = $a->start();
    var_dump(is_resource($watch));
    $b = new Fiber(fn () => fclose($c));
    $b->start();
    var_dump($b->getReturn());
    try {
        fgets($c);
    } catch (TypeError $e) {
        echo $e->getMessage(), "\n";
    }
    // The close shut the socket down: the waiter's watch wakes at once, and the peer
    // sees the end of the stream although the waiter's dup of the fd is still open.
    var_dump($ready($watch, $op === 'write'));
    stream_set_blocking($s, false);
    while (($got = fread($s, 1 << 20)) !== '' && $got !== false);
    $r = [$s]; $w = $e = null;
    stream_select($r, $w, $e, 2);
    var_dump(fread($s, 10), feof($s));
    unset($watch);
    $a->resume(true);
    var_dump($a->getReturn());
    fclose($s);
}

// The streams are freed (their fds closed) once no Fiber is inside them any more.
fiber_io_disable();
var_dump($fds() === $before);

echo "-- the hooks turned off while the waiter is still inside\n";
fiber_io_enable(fn ($stream, bool $write, ?float $timeout) => Fiber::suspend($stream), fn (float $seconds) => false);
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s = stream_socket_accept($server);
$a = new Fiber(fn () => fgets($c));
$a->start();
(new Fiber(fn () => fclose($c)))->start();
fiber_io_disable();
$a->resume(true);
var_dump($a->getReturn());

echo "-- the last reference dropped by another Fiber: the waiting call holds one\n";
fiber_io_enable(fn ($stream, bool $write, ?float $timeout) => Fiber::suspend($stream), fn (float $seconds) => false);
$c = stream_socket_client('tcp://' . stream_socket_get_name($server, false));
$s2 = stream_socket_accept($server);
$a = new Fiber(fn () => fgets($c));
$a->start();
(new Fiber(function () use (&$c) { $c = null; }))->start();
fwrite($s2, "still there\n");
$a->resume(true);
var_dump($a->getReturn());
?>
--EXPECTF--
-- read
bool(true)
bool(true)
fgets(): supplied resource is not a valid stream resource
int(1)
string(0) ""
bool(true)

Warning: fgets(): the stream was closed by another Fiber while this one waited in it (pool.fiber_io) in %s on line %d
bool(false)
-- write
bool(true)
bool(true)
fgets(): supplied resource is not a valid stream resource
int(1)
string(0) ""
bool(true)

Warning: fwrite(): the stream was closed by another Fiber while this one waited in it (pool.fiber_io) in %s on line %d
bool(false)
bool(true)
-- the hooks turned off while the waiter is still inside

Warning: fgets(): the stream was closed by another Fiber while this one waited in it (pool.fiber_io) in %s on line %d
bool(false)
-- the last reference dropped by another Fiber: the waiting call holds one
string(12) "still there
"
