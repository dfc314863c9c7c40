<?php

declare(strict_types=1);

/*
 * php/tarantool with and without ext/ferry's C codec, in one process against one Tarantool
 * (bench/tarantool's server: 10,000 tuples {id, name}): two clients, one whose default
 * codec was built with ferry.msgpack_php_only=1 (pure PHP) and one on the C codec, run in
 * alternated blocks (A B A B ...). Per block: requests per second (wall time) and this
 * PHP process's CPU microseconds per request (getrusage: the client's own cost, which
 * other jobs on a shared machine disturb far less than wall time). Medians and spreads.
 *
 *   php -d extension=ext/ferry/.build/modules/ferry.so bench/msgpack/tarantool_ab.php [rounds=9] [--requests=2000] [--fibers=50]
 *
 * Workloads: sync select of 1 tuple by key, sync select of 100 tuples (limit 100), and
 * Fiber mode (N fibers in flight) select of 1 tuple.
 */

use Ferry\Bench\Tarantool\Ops;
use Ferry\Bench\Tarantool\Runner;
use Ferry\Bench\Tarantool\Server;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Codec\PureCodec;

require __DIR__ . '/../../php/tarantool/autoload.php';
foreach (['Server', 'Ops', 'Runner'] as $f) {
    require __DIR__ . "/../tarantool/lib/$f.php";
}
if (!function_exists('Ferry\Ext\msgpack_unpack')) {
    fwrite(STDERR, "needs ext/ferry: php -d extension=ext/ferry/.build/modules/ferry.so ...\n");
    exit(2);
}
$rounds = 9;
$requests = 2000;
$fibers = 50;
foreach (array_slice($argv, 1) as $arg) {
    if (ctype_digit($arg)) {
        $rounds = max(1, (int) $arg);
    } elseif (preg_match('/^--(requests|fibers)=(\d+)$/', $arg, $m)) {
        ${$m[1]} = (int) $m[2];
    } else {
        fwrite(STDERR, "usage: tarantool_ab.php [rounds] [--requests=N] [--fibers=N]\n");
        exit(2);
    }
}
gc_disable();

$server = new Server();
$server->start();
$uri = $server->uri();
$cClient = Client::connect($uri, ['codec' => new PureCodec(), 'read_timeout' => 60]);
ini_set('ferry.msgpack_php_only', '1');
$pClient = Client::connect($uri, ['codec' => new PureCodec(), 'read_timeout' => 60]);
ini_set('ferry.msgpack_php_only', '0');

$select1 = Ops::all()['select'];
$select100 = static function (Client $c): void {
    $c->select(Server::SPACE_ID, [], 0, 100, 0, 'ALL');
};
if ($cClient->select(Server::SPACE_ID, [], 0, 100, 0, 'ALL') !== $pClient->select(Server::SPACE_ID, [], 0, 100, 0, 'ALL')) {
    fwrite(STDERR, "the two clients disagree\n");
    exit(1);
}

function cpu(): float
{
    $r = getrusage();
    return $r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec'] + ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) / 1e6;
}

/** @return array{float, float} [requests per second, CPU us per request] */
function block(\Closure $run, int $n): array
{
    $cpu = cpu();
    $wall = $run();
    return [$n / $wall, (cpu() - $cpu) / $n * 1e6];
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

$workloads = [
    'sync select 1 tuple' => static fn (Client $c) => Runner::sync($c, $select1, 0, $requests),
    'sync select 100 tuples' => static fn (Client $c) => Runner::sync($c, $select100, 0, intdiv($requests, 4)),
    "fibers N=$fibers select 1 tuple" => static fn (Client $c) => Runner::fibers($c, $select1, $fibers, 0, $requests * 2),
];
$sizes = ['sync select 1 tuple' => $requests, 'sync select 100 tuples' => intdiv($requests, 4), "fibers N=$fibers select 1 tuple" => $requests * 2];
$res = [];
foreach ($workloads as $name => $run) {
    $run($cClient); // warm-up
    $run($pClient);
    for ($r = 0; $r < $rounds; ++$r) {
        $order = $r % 2 === 0 ? ['pure' => $pClient, 'c' => $cClient] : ['c' => $cClient, 'pure' => $pClient];
        foreach ($order as $who => $client) {
            $res[$name][$who][] = block(static fn () => $run($client), $sizes[$name]);
        }
    }
}
printf("PHP %s, %d rounds, load %s\n", PHP_VERSION, $rounds, implode(' ', array_map(static fn ($l) => sprintf('%.1f', $l), sys_getloadavg())));
printf("%-30s %-10s %24s %24s %7s\n", 'workload', 'measure', 'pure PHP', 'ext/ferry C codec', 'ratio');
foreach ($res as $name => $by) {
    foreach (['req/s' => 0, 'CPU us/req' => 1] as $what => $i) {
        $a = array_column($by['pure'], $i);
        $b = array_column($by['c'], $i);
        $f = $i === 0 ? static fn ($x) => number_format($x) : static fn ($x) => sprintf('%.1f', $x);
        printf("%-30s %-10s %24s %24s %6.2fx\n", $i === 0 ? $name : '', $what,
            sprintf('%s (%s..%s)', $f(median($a)), $f(min($a)), $f(max($a))),
            sprintf('%s (%s..%s)', $f(median($b)), $f(min($b)), $f(max($b))),
            $i === 0 ? median($b) / median($a) : median($a) / median($b));
    }
}
echo "ratio: C over pure for req/s, pure over C for CPU per request (> 1: the C codec is better)\n";
