<?php

declare(strict_types=1);

/*
 * ext/ferry's C codec behind php/msgpack (Packer / BufferUnpacker) against the pure-PHP
 * code and ext-msgpack, on Tarantool-sized messages. Needs the extension loaded:
 *
 *   php -d extension=ext/ferry/.build/modules/ferry.so bench/msgpack/native.php [rounds=15] [--json=FILE]
 *
 * The contenders run in alternated rounds (A B C A B C ...) of 0.1 s of CPU time each (CPU
 * time, not wall time, because the machine may be shared); the table gives the median ops
 * per CPU second and the spread (min..max) over the rounds. "via php/msgpack" is
 * Packer::pack() / BufferUnpacker::unpackMessage() (what both Codec classes run), "raw
 * call" Ferry\Ext\msgpack_pack()/msgpack_unpack() called directly, as ext-msgpack's
 * functions are. C/ext = median over ext-msgpack's (> 1: faster than ext-msgpack). ext-msgpack
 * cannot decode Tarantool's ext types to values (no decimal, uuid, datetime or interval): in
 * the "with ..." rows it only skips them, so those rows favour it.
 */

require __DIR__ . '/../../php/tarantool/autoload.php'; // and php/msgpack's

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Ext\Datetime;
use Ferry\MsgPack\Ext\Decimal;
use Ferry\MsgPack\Ext\Interval;
use Ferry\MsgPack\Ext\Uuid;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\Packer;

if (!function_exists('Ferry\Ext\msgpack_unpack') || !extension_loaded('msgpack')) {
    fwrite(STDERR, "needs ext/ferry (php -d extension=ext/ferry/.build/modules/ferry.so) and ext-msgpack\n");
    exit(2);
}
$rounds = 15;
$json = null;
foreach (array_slice($argv, 1) as $arg) {
    if (str_starts_with($arg, '--json=')) {
        $json = substr($arg, 7);
    } elseif (ctype_digit($arg)) {
        $rounds = max(3, (int) $arg);
    }
}

mt_srand(16);
$tuple = static fn (int $i) => [$i, 'user_' . $i, $i * 1.25, $i % 3 === 0, null, mt_rand(0, PHP_INT_MAX), ['tag' . $i % 7, $i], 'a longer text field for row ' . $i];
$rows = array_map($tuple, range(1, 100));
$dtRows = array_map(static fn (int $i) => [$i, new Datetime(1_700_000_000 + $i, $i * 1000, 180), new Interval(day: $i, hour: -$i)], range(1, 100));
$extRows = array_map(static fn (int $i) => [$i, 'user_' . $i, Decimal::fromString(($i * 7) . '.' . ($i % 100)), Uuid::fromBytes(md5((string) $i, true)), $i * 1.25], range(1, 100));
// IPROTO reply bodies: {0x30: rows}; a small one is a single-tuple select / a call result.
$messages = [
    'select 100 tuples, mixed' => [0x30 => $rows],
    'select 100 tuples, with decimal+uuid' => [0x30 => $extRows],
    'select 100 tuples, with datetime+interval' => [0x30 => $dtRows],
    'select 1 tuple' => [0x30 => [$tuple(7)]],
    'select 10 tuples of 5 fields' => [0x30 => array_map(static fn (int $i) => [$i, 'name_' . $i, $i * 3, $i % 2 === 0, 'x'], range(1, 10))],
    'header {0:0,1:sync,5:schema}' => [0x00 => 0, 0x01 => 123456, 0x05 => 80],
    'request [512,0,0xffffffff,0,0,[42]]' => [512, 0, 0xffffffff, 0, 0, [42]],
];

$exts = Extensions::tarantool();
$byType = $exts->byType();
// The raw calls' callbacks: objects (pack) and ext payloads the C code leaves to PHP (none here).
$other = static fn (mixed $v, int $depth) => throw new LogicException('not reached');
$extCb = static fn (int $at, int $h, int $n, int $depth) => throw new LogicException('not reached');
$cPacker = new Packer(0, $exts);
$cUnpacker = new BufferUnpacker('', 0, $exts);
ini_set('ferry.msgpack_php_only', '1');
$pPacker = new Packer(0, $exts);
$pUnpacker = new BufferUnpacker('', 0, $exts);
ini_set('ferry.msgpack_php_only', '0');

/** This process's CPU seconds (user + system): unlike wall time, not inflated while other jobs run. */
function cpu(): float
{
    $r = getrusage();
    return $r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec'] + ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) / 1e6;
}

/** Calls $fn in batches for $budget CPU seconds; returns ops per CPU second. */
function opsPerSecond(callable $fn, float $budget): float
{
    $n = 0;
    $batch = 16;
    $start = cpu();
    do {
        for ($i = 0; $i < $batch; ++$i) {
            $fn();
        }
        $n += $batch;
        $elapsed = cpu() - $start;
    } while ($elapsed < $budget);
    return $n / $elapsed;
}

/** @param array<string, callable> $fns @return array<string, list<float>> */
function alternate(array $fns, int $rounds): array
{
    $out = array_fill_keys(array_keys($fns), []);
    for ($r = 0; $r < $rounds; ++$r) {
        foreach ($fns as $name => $fn) {
            $out[$name][] = opsPerSecond($fn, 0.1);
        }
    }
    return $out;
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

$status = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
printf("PHP %s, opcache %s, JIT %s, ext-msgpack %s, %d rounds, load %s\n\n", PHP_VERSION,
    $status !== false && $status['opcache_enabled'] ? 'on' : 'off',
    $status !== false && ($status['jit']['on'] ?? false) ? 'on' : 'off',
    phpversion('msgpack'), $rounds, implode(' ', array_map(static fn ($l) => sprintf('%.1f', $l), sys_getloadavg())));
printf("%-44s %-6s %21s %21s %21s %21s %7s %7s %7s\n", 'message', 'op', 'pure PHP', 'C, via php/msgpack', 'C, raw call', 'ext-msgpack', 'C/pure', 'C/ext', 'raw/ext');
$report = [];
$fmt = static fn (array $xs) => sprintf('%s (%s..%s)', number_format(median($xs) / 1000) . 'k', number_format(min($xs) / 1000), number_format(max($xs) / 1000));
foreach ($messages as $name => $value) {
    $bytes = $cPacker->pack($value);
    if ($bytes !== $pPacker->pack($value)) {
        fwrite(STDERR, "error: the C and pure packers disagree on '$name'\n");
        exit(1);
    }
    $cUnpacker->reset($bytes);
    $pUnpacker->reset($bytes);
    if (serialize($cUnpacker->unpack()) !== serialize($pUnpacker->unpack())) {
        fwrite(STDERR, "error: the C and pure unpackers disagree on '$name'\n");
        exit(1);
    }
    $plain = msgpack_pack($value);
    $label = sprintf('%s (%d B)', $name, strlen($bytes));
    $runs = [
        'pack' => alternate([
            'pure' => static fn () => $pPacker->pack($value),
            'c' => static fn () => $cPacker->pack($value),
            // ext-msgpack packs the ext objects as PHP-serialised maps: not comparable.
            // objects take the Packer's callback: no raw call for the ext row
            'raw' => str_contains($name, ', with') ? static fn () => $cPacker->pack($value) : static fn () => \Ferry\Ext\msgpack_pack($value, 0, 0, $other),
            'ext' => str_contains($name, ', with') ? static fn () => null : static fn () => msgpack_pack($value),
        ], $rounds),
        'unpack' => alternate([
            // unpackMessage() is what Codec::unpack() (php/msgpack, php/tarantool) runs
            'pure' => static fn () => $pUnpacker->unpackMessage($bytes),
            'c' => static fn () => $cUnpacker->unpackMessage($bytes),
            'raw' => static function () use ($bytes, $byType, $extCb) {
                $off = 0;
                return \Ferry\Ext\msgpack_unpack($bytes, $off, \strlen($bytes), 0, 0, 512, $byType, $extCb);
            },
            'ext' => static fn () => msgpack_unpack($bytes),
        ], $rounds),
    ];
    foreach ($runs as $op => $r) {
        $noExt = $op === 'pack' && str_contains($name, ', with');
        $ratio = static fn (string $a) => $noExt ? 'n/a' : sprintf('%.2fx', median($r[$a]) / median($r['ext']));
        printf("%-44s %-6s %21s %21s %21s %21s %6.2fx %7s %7s\n", $op === 'pack' ? $label : '', $op, $fmt($r['pure']), $fmt($r['c']),
            $fmt($r['raw']), $noExt ? 'n/a' : $fmt($r['ext']), median($r['c']) / median($r['pure']), $ratio('c'), $ratio('raw'));
        $report[] = ['message' => $label, 'op' => $op, 'rounds' => array_map(static fn ($xs) => array_map('round', $xs), $r)];
    }
}
// What php/tarantool runs per reply and per request argument: its default codec (php/msgpack,
// here on the C codec) against its ext-msgpack codec (ExtCodec, no ext types).
$tc = new Ferry\Tarantool\Codec\PureCodec();
$te = new Ferry\Tarantool\Codec\ExtCodec();
printf("\nphp/tarantool codecs, C-backed PureCodec vs ExtCodec (ext-msgpack)\n");
printf("%-44s %-6s %21s %21s %7s\n", 'message', 'op', 'PureCodec on C', 'ExtCodec', 'ratio');
foreach ($messages as $name => $value) {
    if (str_contains($name, ', with')) {
        continue; // ExtCodec can neither pack nor decode those
    }
    $bytes = $tc->pack($value);
    $r = [
        'pack' => alternate(['c' => static fn () => $tc->pack($value), 'ext' => static fn () => $te->pack($value)], $rounds),
        'unpack' => alternate(['c' => static fn () => $tc->unpack($bytes), 'ext' => static fn () => $te->unpack($bytes)], $rounds),
    ];
    foreach ($r as $op => $x) {
        printf("%-44s %-6s %21s %21s %6.2fx\n", $op === 'pack' ? sprintf('%s (%d B)', $name, strlen($bytes)) : '', $op,
            $fmt($x['c']), $fmt($x['ext']), median($x['c']) / median($x['ext']));
        $report[] = ['message' => $name, 'op' => "tarantool codec $op", 'rounds' => array_map(static fn ($xs) => array_map('round', $xs), $x)];
    }
}

if ($json !== null) {
    file_put_contents($json, json_encode($report, JSON_PRETTY_PRINT) . "\n");
}
