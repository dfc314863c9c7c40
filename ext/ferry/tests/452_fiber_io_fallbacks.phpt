--TEST--
ferry: fiber_io hooks unix:// streams too (PHP's own connect still tells unix from tcp), and never suspends in a destructor the GC runs or in an output handler (PHP's blocking calls there; on 8.2 the C hook refuses, on 8.4 the GC's own Fiber is not one the loop owns)
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\fiber_io_enable;

$calls = [];
// As php/worker's closures do: only the Fibers the loop started are suspended. PHP 8.4 runs
// the GC's destructors in a Fiber of its own, where a suspend is allowed but nobody would
// resume it.
$owned = new WeakMap();
fiber_io_enable(
    function ($stream, bool $write, ?float $timeout) use (&$calls, $owned) {
        if (!isset($owned[Fiber::getCurrent()])) {
            return null;
        }
        $calls[] = 'await';
        return Fiber::suspend('await');
    },
    function (float $seconds) use (&$calls, $owned) {
        if (!isset($owned[Fiber::getCurrent()])) {
            return false;
        }
        $calls[] = "sleep $seconds";
        return Fiber::suspend('sleep') ?? true;
    },
);

$path = sys_get_temp_dir() . '/ferry-fio-' . getmypid() . '.sock';
@unlink($path);
$server = stream_socket_server("unix://$path");
$f = new Fiber(function () use ($path) {
    $c = stream_socket_client("unix://$path");
    return [fgets($c), stream_get_meta_data($c)['stream_type']];
});
$owned[$f] = true;
var_dump($f->start());
$s = stream_socket_accept($server);
fwrite($s, "unix ok\n");
$f->resume(true);
var_dump($f->getReturn());
unlink($path);

class Cycle
{
    public ?Cycle $self = null;
    public function __destruct()
    {
        usleep(1000);
        echo "destructor slept\n";
    }
}
$f = new Fiber(function () {
    $d = new Cycle();
    $d->self = $d;
    unset($d);
    gc_collect_cycles();
    return 'gc done';
});
$owned[$f] = true;
var_dump($f->start(), $f->getReturn());

$f = new Fiber(function () {
    ob_start(function (string $buf) {
        usleep(1000);
        return strtoupper($buf);
    });
    echo "from the handler\n";
    ob_end_flush();
    return 'ob done';
});
$owned[$f] = true;
var_dump($f->start(), $f->getReturn());
var_dump($calls);
?>
--EXPECT--
string(5) "await"
array(2) {
  [0]=>
  string(8) "unix ok
"
  [1]=>
  string(11) "unix_socket"
}
destructor slept
NULL
string(7) "gc done"
FROM THE HANDLER
NULL
string(7) "ob done"
array(1) {
  [0]=>
  string(5) "await"
}
