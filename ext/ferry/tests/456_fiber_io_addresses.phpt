--TEST--
ferry: with fiber_io on, a tcp connect to a name that resolves to several addresses tries each in order, as PHP's blocking connect does: a refused first address (::1) falls to the next (127.0.0.1)
--EXTENSIONS--
ferry
--SKIPIF--
<?php
// The name must resolve to ::1 then 127.0.0.1: an /etc/hosts of the test's own, bound over
// the real one in a mount namespace of its own (needs root and unshare). Inside a chroot
// (scripts/trixie-run) unshare cannot make the mounts private, so it keeps them as they
// are, and the bind is made only when none of them propagates to another namespace.
require __DIR__ . '/fio_ns.inc';
exec(fio_ns_command('/dev/null', ['true']) . ' 2>&1', $o, $rc);
if ($rc !== 0) die('skip needs unshare -m and mount --bind (root): ' . implode(' ', $o));
$s = @stream_socket_server('tcp://[::1]:0');
if ($s === false) die('skip needs IPv6 on the loopback');
?>
--FILE--
<?php
if (getenv('FERRY_FIO_NS') !== '1') {
    $hosts = sys_get_temp_dir() . '/ferry-fio-hosts-' . getmypid();
    file_put_contents($hosts, "127.0.0.1 localhost\n::1 fiomulti\n127.0.0.1 fiomulti\n");
    // Under run-tests' -m, valgrind traces children: it cannot run the setuid mount, so the
    // shell skips it for unshare and what unshare runs, and runs the inner php under
    // valgrind itself; its reports land in the output and fail the test.
    $memcheck = getenv('USE_ZEND_ALLOC') === '0' && is_executable('/usr/bin/valgrind')
        ? ['valgrind', '-q', '--leak-check=full', '--show-leak-kinds=definite', '--errors-for-leak-kinds=definite'] : [];
    require __DIR__ . '/fio_ns.inc';
    $cmd = fio_ns_command($hosts, [...$memcheck, PHP_BINARY, '-n', '-d', 'extension_dir=' . ini_get('extension_dir'),
        '-d', 'extension=ferry', __FILE__]);
    $env = ['FERRY_FIO_NS' => '1', 'VALGRIND_OPTS' => '--trace-children-skip=*/unshare'] + getenv();
    $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, $env);
    echo stream_get_contents($pipes[1]);
    proc_close($p);
    unlink($hosts);
    exit;
}
require __DIR__ . '/fio_driver.inc';

$server = stream_socket_server('tcp://127.0.0.1:0');
$port = parse_url('tcp://' . stream_socket_get_name($server, false), PHP_URL_PORT);

// PHP's own blocking connect (no Fiber) is the reference: it reaches 127.0.0.1.
$c = stream_socket_client("tcp://fiomulti:$port", $errno, $errstr, 5);
echo 'blocking: ', stream_socket_get_name($c, true), "\n";

$waits = [];
fio_enable($waits);
$f = new Fiber(function () use ($port) {
    $c = stream_socket_client("tcp://fiomulti:$port", $errno, $errstr, 5);
    return $c === false ? "$errno $errstr" : stream_socket_get_name($c, true);
});
$first = $f->start();
fio_run(['f' => [$f, $first]]);
echo 'in a Fiber: ', $f->getReturn(), "\n";
echo 'waited for the lookup first: ', $waits[0] === 'r' ? 'yes' : 'no', "\n";

// A name that does not resolve: PHP's warnings, errno and errstr, in a Fiber as without.
$nx = fn () => [stream_socket_client('tcp://fio-nx.invalid:1', $errno, $errstr, 5), $errno, $errstr];
var_dump($nx());
$f = new Fiber($nx);
$first = $f->start();
fio_run(['f' => [$f, $first]]);
var_dump($f->getReturn());

// None of them answers: the last address's error, as PHP reports it.
fclose($server);
$f = new Fiber(fn () => [@stream_socket_client("tcp://fiomulti:$port", $errno, $errstr, 5), $errno, $errstr]);
$first = $f->start();
fio_run(['f' => [$f, $first]]);
var_dump($f->getReturn());
?>
--EXPECTF--
blocking: 127.0.0.1:%d
in a Fiber: 127.0.0.1:%d
waited for the lookup first: yes

Warning: stream_socket_client(): php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s in %s on line %d

Warning: stream_socket_client(): Unable to connect to tcp://fio-nx.invalid:1 (php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s) in %s on line %d
array(3) {
  [0]=>
  bool(false)
  [1]=>
  int(0)
  [2]=>
  string(%d) "php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s"
}

Warning: stream_socket_client(): php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s in %s on line %d

Warning: stream_socket_client(): Unable to connect to tcp://fio-nx.invalid:1 (php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s) in %s on line %d
array(3) {
  [0]=>
  bool(false)
  [1]=>
  int(0)
  [2]=>
  string(%d) "php_network_getaddresses: getaddrinfo for fio-nx.invalid failed: %s"
}
array(3) {
  [0]=>
  bool(false)
  [1]=>
  int(111)
  [2]=>
  string(18) "Connection refused"
}
