<?php

declare(strict_types=1);

/*
 * Ferry Tarantool connector benchmark (iterations repeated until settled). Usage:
 *
 *   php bench/tarantool/bench.php [--quick] [--json=FILE] [--ops=select,insert,...]
 *       [--modes=sync,fibers,procs] [--codecs=pure,ext] [--revolutions=10000]
 *       [--fibers=1,2,5,10,25,50,75,100] [--processes=2] [--cap=12] [--pause=0] [--uri=tcp://h:p]
 *
 * Progress goes to stderr, the summary to stdout, all figures to --json.
 */

use Ferry\Bench\Tarantool\Baseline;
use Ferry\Bench\Tarantool\Measure;
use Ferry\Bench\Tarantool\Ops;
use Ferry\Bench\Tarantool\Pairs;
use Ferry\Bench\Tarantool\Pool;
use Ferry\Bench\Tarantool\Runner;
use Ferry\Bench\Tarantool\Server;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Codec\ExtCodec;
use Ferry\Tarantool\Codec\PureCodec;

require __DIR__ . '/../../php/tarantool/autoload.php';
foreach (['Server', 'Measure', 'Ops', 'Baseline', 'Runner', 'Pool', 'Pairs'] as $f) {
    require __DIR__ . "/lib/$f.php";
}

gc_disable();
ini_set('memory_limit', '1G');

$opt = getopt('', ['quick', 'json:', 'ops:', 'modes:', 'codecs:', 'revolutions:', 'fibers:', 'processes:', 'cap:', 'pause:', 'uri:', 'help']);
if (isset($opt['help'])) {
    echo (string) preg_replace('~^.*?/\*\n|\*/.*$~s', '', (string) file_get_contents(__FILE__)), "\n";
    exit(0);
}
$quick = isset($opt['quick']);
$list = static fn (string $k, string $default) => array_values(array_filter(array_map('trim', explode(',', (string) ($opt[$k] ?? $default))), 'strlen'));
$allOps = Ops::all();
$ops = $list('ops', implode(',', array_keys($allOps)));
foreach ($ops as $op) {
    isset($allOps[$op]) || exit("Unknown op '$op' (known: " . implode(', ', array_keys($allOps)) . ")\n");
}
$modes = $list('modes', 'sync,fibers,procs');
$codecs = $list('codecs', extension_loaded('msgpack') ? 'pure,ext' : 'pure');
$revs = (int) ($opt['revolutions'] ?? ($quick ? 1000 : 10000));
$scan = array_map('intval', $list('fibers', $quick ? '1,10,50,100' : '1,2,5,10,25,50,75,100'));
$procs = array_map('intval', $list('processes', '2'));
$measure = $quick
    ? new Measure($revs, 1, 1.0, 1)
    : new Measure($revs, 5, 0.03, (int) ($opt['cap'] ?? 10), (float) ($opt['pause'] ?? 0));

$loadStart = sys_getloadavg();
$server = null;
$uri = $opt['uri'] ?? null;
if ($uri === null) {
    fwrite(STDERR, "Starting tarantool (wal_mode=none, readahead=1 MiB, 10,000 tuples)...\n");
    $server = new Server();
    $server->start();
    $uri = $server->uri();
}
$codecOf = static fn (string $name) => $name === 'ext' ? new ExtCodec() : new PureCodec();
$connect = static fn (string $codec) => Client::connect($uri, ['codec' => $codecOf($codec), 'read_timeout' => 60]);
$admin = $connect('pure');
$version = $admin->evaluate('return box.info.version')[0];
// Untimed, before every iteration: refill (writes of one operation must not change what the
// next reads), run Lua's GC and stop it for the iteration.
$prepare = static function () use ($admin): void {
    $admin->evaluate("bench_refill() collectgarbage('collect') collectgarbage('stop')");
};
$results = [];
$record = static function (string $op, string $mode, string $codec, int $fibers, int $processes, array $m) use (&$results): float {
    $results[] = ['op' => $op, 'mode' => $mode, 'codec' => $codec, 'fibers' => $fibers, 'processes' => $processes] + $m;
    return $m['ops_per_sec'];
};
$get = static function (string $op, string $mode, string $codec) use (&$results): ?float {
    foreach ($results as $r) {
        if ($r['op'] === $op && $r['mode'] === $mode && $r['codec'] === $codec) {
            return $r['ops_per_sec'];
        }
    }
    return null;
};

fprintf(STDERR, "Tarantool %s at %s; PHP %s; %d revolutions per iteration%s\n", $version, $uri, PHP_VERSION, $revs, $quick ? ' (quick)' : '');

// 1. Baseline and synchronous client.
if (in_array('sync', $modes, true)) {
    fwrite(STDERR, "\n== sync (one request at a time) ==\n");
    foreach ($codecs as $codec) {
        if (in_array('select', $ops, true)) {
            $base = new Baseline($uri, $codec === 'ext');
            $prepare();
            $base->selects(200);
            $record('select', 'baseline', $codec, 1, 1, $measure->run("baseline loop select [$codec]", static fn () => $base->selects($revs), $prepare));
        }
        $c = $connect($codec);
        foreach ($ops as $op) {
            $prepare();
            Runner::sync($c, $allOps[$op], 0, min(200, $revs)); // warm-up: connect, first-call paths
            $record($op, 'sync', $codec, 1, 1, $measure->run("sync $op [$codec]", static fn () => Runner::sync($c, $allOps[$op], 0, $revs), $prepare));
        }
        unset($base);
    }
}

// 1b. The 5% bar: client vs hand-written loop in interleaved blocks (see Pairs).
$pairs = $quick ? 4 : 40;
$block = $quick ? 500 : 2000;
$paired = [];
if (in_array('sync', $modes, true) && in_array('select', $ops, true)) {
    fwrite(STDERR, "\n== sync select: client vs hand-written loop, interleaved ($pairs pairs of $block) ==\n");
    foreach ($codecs as $codec) {
        $base = new Baseline($uri, $codec === 'ext');
        $c = $connect($codec);
        $prepare();
        $base->selects(200);
        Runner::sync($c, $allOps['select'], 0, 200);
        $paired[$codec] = Pairs::compare(
            "client/baseline select [$codec]",
            static fn () => $base->selects($block),
            static fn () => Runner::syncSelects($c, $block),
            $pairs,
            $block,
        );
        unset($base);
    }
}

// 2. Fibers in one process: find the best N on select, then every op with it.
$bestN = $scan[count($scan) - 1];
if (in_array('fibers', $modes, true) || in_array('procs', $modes, true)) {
    fwrite(STDERR, "\n== Fibers: scanning N in flight (select, pure codec) ==\n");
    $c = $connect('pure');
    $scanResults = [];
    foreach ($scan as $n) {
        $prepare();
        Runner::fibers($c, $allOps['select'], $n, 0, min(500, $revs));
        $scanResults[$n] = $record('select', 'fiber_scan', 'pure', $n, 1, $measure->run("fibers N=$n select [pure]", static fn () => Runner::fibers($c, $allOps['select'], $n, 0, $revs), $prepare));
    }
    arsort($scanResults);
    $bestN = (int) array_key_first($scanResults);
    fprintf(STDERR, "best N = %d\n", $bestN);
}
// The 10x bar, in interleaved blocks as well (sync = reference, Fibers = challenger).
$fiberPair = null;
if (in_array('fibers', $modes, true) && in_array('sync', $modes, true) && in_array('select', $ops, true)) {
    fwrite(STDERR, "\n== select [pure]: Fibers (N = $bestN) vs sync, interleaved ==\n");
    $c = $connect('pure');
    $prepare();
    $fiberPair = Pairs::compare(
        "fibers/sync select [pure]",
        static fn () => Runner::sync($c, $allOps['select'], 0, $block),
        static fn () => Runner::fibers($c, $allOps['select'], $bestN, 0, $block),
        $quick ? 4 : 12,
        $block,
    );
}

if (in_array('fibers', $modes, true)) {
    fwrite(STDERR, "\n== Fibers, N = $bestN ==\n");
    foreach ($codecs as $codec) {
        $c = $connect($codec);
        foreach ($ops as $op) {
            $prepare();
            Runner::fibers($c, $allOps[$op], $bestN, 0, min(500, $revs));
            $record($op, 'fibers', $codec, $bestN, 1, $measure->run("fibers N=$bestN $op [$codec]", static fn () => Runner::fibers($c, $allOps[$op], $bestN, 0, $revs), $prepare));
        }
    }
}

// 3. P processes x N Fibers (each process its own connection).
if (in_array('procs', $modes, true)) {
    foreach ($procs as $p) {
        fwrite(STDERR, "\n== $p processes x $bestN Fibers ==\n");
        foreach ($codecs as $codec) {
            $pool = new Pool($p, static fn () => $connect($codec));
            foreach ($ops as $op) {
                $prepare();
                $pool->run($op, min(500, $revs), $bestN);
                $record($op, "procs$p", $codec, $bestN, $p, $measure->run("{$p}x{$bestN} $op [$codec]", static fn () => $pool->run($op, $revs, $bestN), $prepare));
            }
            $pool->close();
        }
    }
}
$admin->evaluate("collectgarbage('restart')");

// Summary.
$columns = [];
foreach ($results as $r) {
    if ($r['mode'] !== 'fiber_scan') {
        $columns[$r['mode'] . '/' . $r['codec']] = true;
    }
}
$columns = array_keys($columns);
echo $quick ? "\nop/s (quick: one iteration of $revs requests each, indicative only)\n" : "\nop/s (mean of the steadiest 5 consecutive iterations of $revs requests)\n";
printf("%-12s", 'op');
foreach ($columns as $col) {
    printf(" %14s", $col);
}
printf(" %12s %12s\n", 'fibers÷sync', 'ext÷pure');
foreach ($ops as $op) {
    printf("%-12s", $op);
    foreach ($columns as $col) {
        [$mode, $codec] = explode('/', $col);
        $v = $get($op, $mode, $codec);
        printf(" %14s", $v === null ? '-' : number_format($v));
    }
    $fs = ($f = $get($op, 'fibers', 'pure')) && ($s = $get($op, 'sync', 'pure')) ? sprintf('%.1fx', $f / $s) : '-';
    $ep = ($e = $get($op, 'sync', 'ext')) && ($s = $get($op, 'sync', 'pure')) ? sprintf('%.2fx', $e / $s) : '-';
    printf(" %12s %12s\n", $fs, $ep);
}

$bars = [];
foreach ($paired as $codec => $pr) {
    $bars["sync_select_vs_baseline_$codec"] = ['required' => 0.95, 'pass' => $pr['ratio'] >= 0.95,
        'how' => "median of interleaved pairs of $block selects (client op/s / hand-written loop op/s)"] + $pr;
}
if ($fiberPair !== null) {
    $bars['fibers_select_vs_sync_pure'] = ['required' => 10.0, 'pass' => $fiberPair['ratio'] >= 10,
        'how' => "median of interleaved pairs of $block selects (Fibers N = $bestN op/s / sync op/s), pure codec"] + $fiberPair;
}
printf("\nBars (same run; load average at start %.2f, now %.2f on %s CPUs):\n", $loadStart[0], sys_getloadavg()[0], trim((string) shell_exec('nproc')));
foreach ($bars as $name => $b) {
    printf("  %-34s %8.3f (need >= %.2f)  %s\n", $name, $b['ratio'], $b['required'], $b['pass'] ? 'PASS' : 'FAIL');
}

if (isset($opt['json'])) {
    $doc = [
        'meta' => [
            'tool' => 'bench/tarantool/bench.php', 'date' => date(DATE_ATOM), 'php' => PHP_VERSION, 'tarantool' => $version,
            'revolutions' => $revs, 'quick' => $quick, 'method' => $quick ? 'one iteration per figure' : '5 consecutive iterations within 3% (cap ' . ($opt['cap'] ?? 10) . ')',
            'cpus' => (int) trim((string) shell_exec('nproc')), 'best_fibers' => $bestN, 'uname' => php_uname(),
            'load_average_start' => $loadStart, 'load_average_end' => sys_getloadavg(),
        ],
        'results' => $results,
        'bars' => $bars,
    ];
    file_put_contents($opt['json'], json_encode($doc, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
    fwrite(STDERR, "JSON written to {$opt['json']}\n");
}
$server?->stop();
