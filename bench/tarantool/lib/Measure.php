<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

/**
 * The method: an iteration is $revolutions requests; iterations repeat until $window in a
 * row are within $tolerance of each other (max-min over mean), up to $cap iterations, after
 * which the steadiest window is taken and flagged unstable. The result is the window's mean.
 */
final class Measure
{
    public function __construct(
        public readonly int $revolutions,
        private readonly int $window = 5,
        private readonly float $tolerance = 0.03,
        private readonly int $cap = 12,
        private readonly float $pause = 0.0,
    ) {
        $this->tty = \stream_isatty(\STDERR);
    }

    private bool $tty;

    /**
     * @param \Closure(): float $iteration runs one iteration, returns its seconds
     * @param \Closure(): void|null $between untimed work before each iteration
     * @return array{ops_per_sec: float, stable: bool, iterations: int, spread: float, samples: list<float>}
     */
    public function run(string $label, \Closure $iteration, ?\Closure $between = null): array
    {
        $times = [];
        $best = null;
        while (true) {
            if ($between !== null) {
                $between();
            }
            if ($this->pause > 0 && $times !== []) {
                \usleep((int) ($this->pause * 1e6));
            }
            $times[] = $iteration();
            $n = \count($times);
            if ($this->tty) {
                \fprintf(\STDERR, "\r  %-40s iteration %2d: %9.0f op/s   ", $label, $n, $this->revolutions / \end($times));
            }
            if ($n >= $this->window) {
                $w = \array_slice($times, -$this->window);
                $mean = \array_sum($w) / \count($w);
                $spread = (\max($w) - \min($w)) / $mean;
                if ($best === null || $spread < $best[1]) {
                    $best = [$mean, $spread];
                }
                if ($spread <= $this->tolerance || $n >= $this->cap) {
                    break;
                }
            }
        }
        $stable = $best[1] <= $this->tolerance;
        $ops = $this->revolutions / $best[0];
        \fprintf(\STDERR, ($this->tty ? "\r" : '') . "  %-40s %9.0f op/s  (%d iterations, spread %.1f%%%s)\n", $label, $ops, \count($times), $best[1] * 100, $stable ? '' : ', UNSTABLE');
        return [
            'ops_per_sec' => \round($ops, 1),
            'stable' => $stable,
            'iterations' => \count($times),
            'spread' => \round($best[1], 4),
            'samples' => \array_map(fn ($t) => \round($this->revolutions / $t, 1), $times),
        ];
    }
}
