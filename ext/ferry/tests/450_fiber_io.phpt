--TEST--
ferry: fiber_io_enable() makes tcp connect/read/write and usleep()/sleep() inside a Fiber wait through the given closures (null from them, no Fiber, or hooks off: PHP's blocking behaviour)
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{fiber_io_enable, fiber_io_disable};

$server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
$addr = 'tcp://' . stream_socket_get_name($server, false);
$waits = [];
$foreign = null; // a Fiber the "loop" does not own: its waits must block
fiber_io_enable(
    function ($stream, bool $write, ?float $timeout) use (&$waits, &$foreign) {
        if (Fiber::getCurrent() === $foreign) {
            return null;
        }
        $waits[] = ($write ? 'w' : 'r') . ($timeout === null ? '' : ':' . $timeout);
        return Fiber::suspend([$stream, $write, $timeout]);
    },
    function (float $seconds) use (&$foreign) {
        if (Fiber::getCurrent() === $foreign) {
            return false;
        }
        return Fiber::suspend([null, false, $seconds]) ?? true;
    },
);

// Two clients, each connecting, writing a line and reading the answer. The server answers
// only once both lines arrived, so both Fibers must be suspended in fgets() at once.
$client = function (string $name) use ($addr) {
    $c = stream_socket_client($addr, $errno, $errstr, 5);
    fwrite($c, "$name\n");
    $line = fgets($c);
    stream_set_timeout($c, 0, 100000);
    $late = fgets($c); // nothing comes: PHP's own timeout answer
    return [$line, $late, stream_get_meta_data($c)['timed_out'], stream_get_meta_data($c)['stream_type']];
};
$fibers = ['a' => new Fiber($client), 'b' => new Fiber($client)];
$pending = [];
foreach ($fibers as $name => $f) {
    $pending[$name] = $f->start($name);
}
$conns = [];
$lines = [];
$deadline = microtime(true) + 10;
while ($pending !== [] && microtime(true) < $deadline) {
    while (($c = @stream_socket_accept($server, 0)) !== false) {
        $conns[] = $c;
    }
    foreach ($conns as $i => $c) {
        $r = [$c]; $w = $e = null;
        if (stream_select($r, $w, $e, 0) > 0 && ($l = fgets($c)) !== false) {
            $lines[$i] = trim($l);
        }
    }
    if (count($lines) === 2 && !isset($answered)) {
        $answered = true;
        foreach ($conns as $i => $c) {
            fwrite($c, "hello {$lines[$i]}\n");
        }
    }
    foreach ($pending as $name => [$stream, $write, $timeout]) {
        $ready = true;
        if ($stream !== null) {
            $r = $write ? [] : [$stream]; $w = $write ? [$stream] : []; $e = null;
            $ready = stream_select($r, $w, $e, 0, 1000) > 0;
            if (!$ready && $timeout !== null && $timeout < 1 && isset($answered)) {
                $ready = false; // the 0.1 s read: report a timeout
                $fibers[$name]->isSuspended() && ($pending[$name] = $fibers[$name]->resume(false));
                if ($fibers[$name]->isTerminated()) unset($pending[$name]);
                continue;
            }
        }
        if ($ready) {
            $pending[$name] = $fibers[$name]->resume(true);
            if ($fibers[$name]->isTerminated()) unset($pending[$name]);
        }
    }
    usleep(1000);
}
foreach ($fibers as $name => $f) {
    var_dump($f->getReturn());
}
echo "both waited before any answer: ", count(array_filter($waits, fn ($w) => str_starts_with($w, 'r:'))) >= 2 ? 'yes' : 'no', "\n";

// usleep() in an owned Fiber goes to the closure; outside a Fiber it sleeps as usual.
$slept = null;
$f = new Fiber(function () { usleep(250000); return sleep(1); });
$slept = $f->start();
var_dump($slept);
var_dump($f->resume()[2], $f->resume(true), $f->getReturn());
$t = hrtime(true); usleep(20000); echo "usleep outside: ", (hrtime(true) - $t) >= 20e6 ? 'slept' : 'returned early', "\n";

// A Fiber the closures disown reads the blocking way.
$foreign = new Fiber(function () use ($addr, $server) {
    $c = stream_socket_client($addr);
    $s = stream_socket_accept($server);
    fwrite($s, "direct\n");
    usleep(1000);
    return fgets($c);
});
$before = count($waits);
var_dump($foreign->start(), $foreign->getReturn(), count($waits) === $before);

// Off: nothing is asked.
fiber_io_disable();
$f = new Fiber(function () use ($addr, $server) {
    $c = stream_socket_client($addr);
    $s = stream_socket_accept($server);
    fwrite($s, "off\n");
    usleep(1000);
    return fgets($c);
});
$before = count($waits);
var_dump($f->start(), $f->getReturn(), count($waits) === $before);

// A refused connect in an owned Fiber fails as PHP's does (its port is closed now).
fiber_io_enable(fn ($s, $w, $t) => Fiber::suspend(true) ?? true, fn ($s) => false);
$port = stream_socket_get_name($server, false);
fclose($server);
$f = new Fiber(fn () => [@stream_socket_client("tcp://$port", $errno, $errstr, 1), $errno, $errstr]);
$r = $f->start();
while (!$f->isTerminated()) { usleep(1000); $f->resume(true); }
var_dump($f->getReturn());
?>
--EXPECT--
array(4) {
  [0]=>
  string(8) "hello a
"
  [1]=>
  bool(false)
  [2]=>
  bool(true)
  [3]=>
  string(14) "tcp_socket/ssl"
}
array(4) {
  [0]=>
  string(8) "hello b
"
  [1]=>
  bool(false)
  [2]=>
  bool(true)
  [3]=>
  string(14) "tcp_socket/ssl"
}
both waited before any answer: yes
array(3) {
  [0]=>
  NULL
  [1]=>
  bool(false)
  [2]=>
  float(0.25)
}
float(1)
NULL
int(0)
usleep outside: slept
NULL
string(7) "direct
"
bool(true)
NULL
string(4) "off
"
bool(true)
array(3) {
  [0]=>
  bool(false)
  [1]=>
  int(111)
  [2]=>
  string(18) "Connection refused"
}
