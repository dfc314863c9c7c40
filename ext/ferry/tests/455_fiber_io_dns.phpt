--TEST--
ferry: with fiber_io on, a tcp connect to a host name inside a Fiber resolves the name off the loop: other Fibers run while the lookup is blocked, the connect timeout bounds the wait, and a numeric address needs no lookup
--EXTENSIONS--
ferry
--SKIPIF--
<?php
if (!is_dir('/proc/self/task')) die('skip needs /proc/self/task');
exec('command -v mkfifo', $o, $rc);
if ($rc !== 0) die('skip needs mkfifo');
?>
--ENV--
RES_OPTIONS=timeout:1 attempts:1
--FILE--
<?php
require __DIR__ . '/fio_driver.inc';

// glibc reads HOSTALIASES for a name with no dot that /etc/hosts does not know. Made a FIFO,
// it blocks the lookup in open() until someone writes it: a lookup as slow as we like.
$fifo = sys_get_temp_dir() . '/ferry-fio-hosts-' . getmypid();
@unlink($fifo);
exec('mkfifo ' . escapeshellarg($fifo));
putenv("HOSTALIASES=$fifo");
$feed = fn (int $after) => proc_open(
    // timeout: a feeder left blocked in open() (no reader any more) ends anyway.
    ['timeout', '30', 'sh', '-c', 'sleep "$1"; while :; do echo "fioalias localhost" > "$0" || exit 1; done', $fifo, (string) $after],
    [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
    $pipes,
);
// Only there so that the old blocking lookup ends: it would wait for the FIFO for ever.
$watchdog = $feed(8);
$threads = fn () => count(scandir('/proc/self/task')) - 2;

$server = stream_socket_server('tcp://127.0.0.1:0');
$port = parse_url('tcp://' . stream_socket_get_name($server, false), PHP_URL_PORT);
$waits = [];
fio_enable($waits);

echo "-- a lookup does not block the other Fibers\n";
$events = [];
$lookup = new Fiber(function () use ($port, &$events) {
    $c = @stream_socket_client("tcp://fioalias:$port", $errno, $errstr, 10);
    $events[] = 'lookup answered';
    // glibc sends the alias's target to DNS: whether that answers depends on the network.
    return $c !== false || str_starts_with($errstr, 'php_network_getaddresses: getaddrinfo for fioalias failed: ');
});
$feeder = null;
$other = new Fiber(function () use (&$events, &$feeder, $feed) {
    $events[] = 'other Fiber ran';
    $feeder = $feed(0);
});
$first = $lookup->start();
$other->start();
fio_run(['lookup' => [$lookup, $first]]);
var_dump($events, $lookup->getReturn(), $waits[0]);
proc_terminate($feeder);
proc_close($feeder);

echo "-- the connect timeout bounds the lookup\n";
$waits = [];
$t = microtime(true);
$late = new Fiber(fn () => [@stream_socket_client("tcp://fioalias:$port", $errno, $errstr, 0.3), $errno, $errstr]);
fio_run(['late' => [$late, $late->start()]]);
var_dump($late->getReturn(), microtime(true) - $t < 5);
// The abandoned lookup thread still waits for the FIFO; fed, it ends and frees its answer.
$feeder = $feed(0);
for ($i = 0; $i < 2000 && $threads() > 1; $i++) {
    usleep(10000);
}
var_dump($threads());
proc_terminate($feeder);
proc_close($feeder);

echo "-- a numeric address: no lookup\n";
$waits = [];
$numeric = new Fiber(fn () => stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 5) !== false);
$s = $numeric->start();
if (!$numeric->isTerminated()) {
    fio_run(['numeric' => [$numeric, $s]]);
}
var_dump($numeric->getReturn(), in_array('r', $waits, true));

echo "-- a Fiber the loop does not own: PHP's own lookup and connect\n";
Ferry\Ext\fiber_io_enable(fn ($stream, bool $write, ?float $timeout) => null, fn (float $seconds) => false);
$foreign = new Fiber(fn () => stream_socket_client("tcp://localhost:$port", $errno, $errstr, 5) !== false);
var_dump($foreign->start(), $foreign->getReturn());
for ($i = 0; $i < 2000 && $threads() > 1; $i++) {
    usleep(10000); // the lookup thread it started and let go ends by itself
}
var_dump($threads());

proc_terminate($watchdog);
proc_close($watchdog);
unlink($fifo);
?>
--EXPECT--
-- a lookup does not block the other Fibers
array(2) {
  [0]=>
  string(15) "other Fiber ran"
  [1]=>
  string(15) "lookup answered"
}
bool(true)
string(1) "r"
-- the connect timeout bounds the lookup
array(3) {
  [0]=>
  bool(false)
  [1]=>
  int(110)
  [2]=>
  string(20) "Connection timed out"
}
bool(true)
int(1)
-- a numeric address: no lookup
bool(true)
bool(false)
-- a Fiber the loop does not own: PHP's own lookup and connect
NULL
bool(true)
int(1)
