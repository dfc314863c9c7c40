<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Tests\Support\LeakApp;
use PHPUnit\Framework\TestCase;

/**
 * The leak watch as the server sees it: silence for a clean app, findings kept across
 * worker restarts, the log, the metrics and `ferry leaks`, and nothing at all when off.
 */
final class LeakWatchServerTest extends TestCase
{
    private ?LeakApp $app = null;

    protected function tearDown(): void
    {
        $this->app?->stop();
        $this->app = null;
    }

    /**
     * 10,000 requests, each one checked, through an app that touches what the leaky ones
     * do (timezone, error handler, a file, a static cache, a watched service) and puts it
     * all back.
     */
    public function testCleanAppGivesNoFinding(): void
    {
        $this->app = new LeakApp('clean.php', every: 1, warmup: 10);
        $this->app->hammer(['/', '/report', '/page'], 10_000);
        self::assertSame([], $this->app->findings(), $this->app->server->log());
        self::assertSame("no leaks found\n", $this->app->cli('leaks'));
        $workers = json_decode($this->app->admin('/workers'), true);
        self::assertSame(10_000, $workers[0]['Jobs'], 'every request reached the one worker');
        $metrics = $this->app->admin('/metrics');
        self::assertStringContainsString("# TYPE ferry_jobs_total counter\n", $metrics);
        self::assertStringNotContainsString('ferry_leak_findings_total{', $metrics, 'no finding, no sample');
    }

    public function testFindingsSurviveWorkerRestarts(): void
    {
        // max_jobs retires the worker after 12 requests; its replacement finds the same leak.
        $this->app = new LeakApp('static-array.php', pool: "  max_jobs: 12\n");
        $this->app->hammer(['/'], 3);
        $this->app->hammer(['/add'], 3);
        $first = $this->app->waitForFinding('static');
        $this->app->hammer(['/'], 6);
        $deadline = microtime(true) + 10;
        while (($pid = $this->workerPid()) === null || $pid === $first['pid']) {
            self::assertLessThan($deadline, microtime(true), 'the worker was never replaced: ' . $this->app->server->log());
            usleep(20_000);
        }
        self::assertSame([$first['message']], array_column($this->app->findings(), 'message'), 'kept while the new worker has found nothing');

        $this->app->hammer(['/'], 3);
        $this->app->hammer(['/add'], 3);
        $deadline = microtime(true) + 10;
        while (($findings = $this->app->findings())[0]['reports'] !== 2) {
            self::assertLessThan($deadline, microtime(true), 'the new worker never reported: ' . json_encode($findings));
            usleep(20_000);
        }
        self::assertCount(1, $findings);
        self::assertSame($first['pid'], $findings[0]['pid'], 'the first report is the one kept');
        self::assertStringContainsString("ferry_leak_findings_total{kind=\"static\"} 1\n", $this->app->admin('/metrics'));
        $text = $this->app->cli('leaks');
        self::assertStringContainsString("[static] {$first['message']}\n", $text);
        self::assertStringContainsString("in worker {$first['pid']} after 6 requests; found by 2 workers\n", $text);
        $warnings = preg_match_all('/level=WARN msg="leak: App\\\\\\\\Registry::\$items grows/', $this->app->server->log());
        self::assertSame(1, $warnings, 'logged once, at warn: ' . $this->app->server->log());
    }

    public function testOffReportsNothing(): void
    {
        $this->app = new LeakApp('static-array.php', watch: false);
        $this->app->hammer(['/'], 3);
        $this->app->hammer(['/add'], 20);
        self::assertSame([], $this->app->findings());
    }

    private function workerPid(): ?int
    {
        foreach (json_decode($this->app->admin('/workers'), true) as $w) {
            if ($w['State'] === 'ready' || $w['State'] === 'working') {
                return $w['PID'];
            }
        }

        return null;
    }
}
