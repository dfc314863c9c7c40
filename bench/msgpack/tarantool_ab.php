<?php

declare(strict_types=1);

/*
 * Tarantool select op/s, sync and Fiber mode, with and without ext/ferry's C codec: runs
 * bench/tarantool/bench.php (the default codec, php/msgpack) in alternated processes,
 * A B A B ..., with and without `-d extension=<ferry.so>`, and prints the medians and
 * spreads. Each run starts its own Tarantool.
 *
 *   php bench/msgpack/tarantool_ab.php [pairs=7] [--revolutions=5000] [--fibers=50] [--so=ext/ferry/.build/modules/ferry.so]
 */

$root = dirname(__DIR__, 2);
$pairs = 7;
$revs = 5000;
$fibers = 50;
$so = "$root/ext/ferry/.build/modules/ferry.so";
foreach (array_slice($argv, 1) as $arg) {
    if (ctype_digit($arg)) {
        $pairs = max(1, (int) $arg);
    } elseif (preg_match('/^--(revolutions|fibers|so)=(.+)$/', $arg, $m)) {
        ${['revolutions' => 'revs', 'fibers' => 'fibers', 'so' => 'so'][$m[1]]} = $m[1] === 'so' ? $m[2] : (int) $m[2];
    } else {
        fwrite(STDERR, "usage: tarantool_ab.php [pairs] [--revolutions=N] [--fibers=N] [--so=PATH]\n");
        exit(2);
    }
}
if (!is_file($so)) {
    fwrite(STDERR, "$so missing: run ext/ferry/build.sh\n");
    exit(2);
}

/** @return array<string, float> mode => op/s */
function run(string $root, ?string $so, int $revs, int $fibers): array
{
    $json = tempnam(sys_get_temp_dir(), 'tab');
    $cmd = [PHP_BINARY];
    if ($so !== null) {
        $cmd[] = '-d';
        $cmd[] = "extension=$so";
    }
    array_push($cmd, "$root/bench/tarantool/bench.php", '--quick', '--ops=select', '--modes=sync,fibers', '--codecs=pure',
        "--fibers=$fibers", "--revolutions=$revs", "--json=$json");
    $p = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    if (proc_close($p) !== 0 && filesize($json) === 0) {
        fwrite(STDERR, 'failed: ' . implode(' ', $cmd) . "\n");
        exit(1);
    }
    $out = [];
    foreach (json_decode((string) file_get_contents($json), true)['results'] as $r) {
        if (in_array($r['mode'], ['sync', 'fibers'], true)) {
            $out[$r['mode']] = $r['ops_per_sec'];
        }
    }
    unlink($json);
    return $out;
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

$runs = ['pure PHP' => [], 'ext/ferry' => []];
for ($i = 0; $i < $pairs; ++$i) {
    // alternate which goes first, so a trend in the machine's load hits both alike
    $order = $i % 2 === 0 ? ['pure PHP', 'ext/ferry'] : ['ext/ferry', 'pure PHP'];
    foreach ($order as $name) {
        $runs[$name][] = run($root, $name === 'ext/ferry' ? $so : null, $revs, $fibers);
        fprintf(STDERR, "pair %d %-9s %s\n", $i + 1, $name, json_encode(end($runs[$name])));
    }
}
printf("select, %d requests per run, %d pairs, Fibers N=%d, load %s\n", $revs, $pairs, $fibers,
    implode(' ', array_map(static fn ($l) => sprintf('%.1f', $l), sys_getloadavg())));
printf("%-8s %28s %28s %8s\n", 'mode', 'pure PHP op/s', 'ext/ferry op/s', 'ratio');
foreach (['sync', 'fibers'] as $mode) {
    $a = array_column($runs['pure PHP'], $mode);
    $b = array_column($runs['ext/ferry'], $mode);
    $ratios = array_map(static fn ($x, $y) => $y / $x, $a, $b);
    printf("%-8s %28s %28s %7.2fx (pairs %.2f..%.2f)\n", $mode,
        sprintf('%s (%s..%s)', number_format(median($a)), number_format(min($a)), number_format(max($a))),
        sprintf('%s (%s..%s)', number_format(median($b)), number_format(min($b)), number_format(max($b))),
        median($b) / median($a), min($ratios), max($ratios));
}
