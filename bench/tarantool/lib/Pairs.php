<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

/**
 * Compares two workloads on a shared, drifting machine: short blocks of each, interleaved in
 * ABBA order so slow phases hit both alike; the median of the per-pair speed ratios is the
 * estimate. The PHP process's own CPU time per request is recorded too: it shows the
 * connector's overhead even when wall-clock figures are swamped by other load.
 */
final class Pairs
{
    /**
     * @param \Closure(): float $a runs a block, returns wall seconds (the reference)
     * @param \Closure(): float $b runs a block of the same size
     * @return array{ratio: float, ratios: list<float>, cpu_us_a: float, cpu_us_b: float}
     */
    public static function compare(string $label, \Closure $a, \Closure $b, int $pairs, int $block): array
    {
        $ratios = [];
        $cpuA = $cpuB = 0.0;
        for ($k = 0; $k < $pairs; $k++) {
            $order = $k % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
            $t = [];
            foreach ($order as $side) {
                $c0 = self::cpu();
                $t[$side] = $side === 'a' ? $a() : $b();
                $c = self::cpu() - $c0;
                $side === 'a' ? $cpuA += $c : $cpuB += $c;
            }
            $ratios[] = $t['a'] / $t['b'];
            if (\stream_isatty(\STDERR)) {
                \fprintf(\STDERR, "\r  %-40s pair %2d/%d: ratio %.3f   ", $label, $k + 1, $pairs, \end($ratios));
            }
        }
        \sort($ratios);
        $n = \count($ratios);
        $median = $n % 2 ? $ratios[\intdiv($n, 2)] : ($ratios[$n / 2 - 1] + $ratios[$n / 2]) / 2;
        $result = [
            'ratio' => \round($median, 4),
            'ratios' => \array_map(static fn ($r) => \round($r, 4), $ratios),
            'cpu_us_a' => \round($cpuA / ($pairs * $block) * 1e6, 3),
            'cpu_us_b' => \round($cpuB / ($pairs * $block) * 1e6, 3),
        ];
        \fprintf(
            \STDERR,
            "%s  %-40s median ratio %.3f over %d pairs (quartiles %.3f..%.3f); PHP CPU %.2f vs %.2f us/request\n",
            \stream_isatty(\STDERR) ? "\r" : '',
            $label,
            $median,
            $pairs,
            $ratios[\intdiv($n, 4)],
            $ratios[\intdiv(3 * $n, 4)],
            $result['cpu_us_a'],
            $result['cpu_us_b'],
        );
        return $result;
    }

    private static function cpu(): float
    {
        $r = \getrusage();
        return $r['ru_utime.tv_sec'] + $r['ru_utime.tv_usec'] / 1e6 + $r['ru_stime.tv_sec'] + $r['ru_stime.tv_usec'] / 1e6;
    }
}
