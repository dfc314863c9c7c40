<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Internal\Leak\LeakReplay;
use Ferry\Worker\Tests\Support\LeakApp;
use PHPUnit\Framework\TestCase;

/**
 * The leak watch's replay check (pool.leak_watch_replay) under a real server: a page whose
 * state another request corrupted is found, a clean app gives nothing, a page that differs
 * every time is left out, and neither a client nor a non-GET request ever sees a replay.
 */
final class LeakReplayTest extends TestCase
{
    private ?LeakApp $app = null;

    protected function tearDown(): void
    {
        $this->app?->stop();
        $this->app = null;
    }

    public function testReplayFindsAPageAnotherRequestCorrupted(): void
    {
        $this->app = new LeakApp('replay.php', every: 5, warmup: 3, pool: "  leak_watch_replay: [\"/page\", \"/set\", \"/rand\"]\n");
        $this->app->hammer(['/'], 3);
        self::assertStringContainsString('theme: light', $this->app->get('/page'));
        $this->app->get('/rand');
        // Replays run while nothing has changed what /page shows: no finding.
        $this->app->hammer(['/', '/page', '/rand'], 300);
        self::assertSame([], $this->app->findings(), $this->app->server->log());

        $set = $this->app->client->request('POST', '/set');
        self::assertSame(200, $set['status']);
        $this->app->hammer(['/'], 250);
        $finding = $this->app->waitForFinding('replay');
        self::assertSame('GET /page', $finding['subject']);
        self::assertStringContainsString('GET /page answers differently when replayed after other requests', $finding['message']);
        self::assertStringContainsString('theme: light', $finding['message'], 'the early body');
        self::assertStringContainsString('theme: dark', $finding['message'], 'the body now');

        $kinds = array_column($this->app->findings(), 'kind');
        self::assertSame(['replay'], array_values(array_filter($kinds, static fn (string $k): bool => $k === 'replay')), 'one replay finding: /rand is not compared');
        self::assertSame("sets 1\n", $this->app->get('/stats'), 'POST /set ran once, never replayed though listed');
        // The worker's own output reaches the log on its way, not before the answers.
        $this->app->server->waitForLog('/GET \/rand gave two different bodies when replayed twice in a row/');
        self::assertMatchesRegularExpression('/level=WARN msg="leak: GET \/page answers differently/', $this->app->server->log());
        self::assertStringContainsString('ferry_leak_findings_total{kind="replay"} 1', $this->app->admin('/metrics'));
        $workers = json_decode($this->app->admin('/workers'), true);
        self::assertSame(3 + 2 + 300 + 1 + 250 + 1, $workers[0]['Jobs'], 'the worker answered exactly the requests sent');
    }

    public function testCleanAppGivesNoReplayFinding(): void
    {
        $this->app = new LeakApp('clean.php', every: 5, warmup: 3, pool: "  leak_watch_replay: [\"/\", \"/report\", \"/page\"]\n");
        $this->app->hammer(['/', '/report', '/page'], 1_000);
        self::assertSame([], $this->app->findings(), $this->app->server->log());
        self::assertStringNotContainsString('replayed', $this->app->server->log());
    }

    public function testDifferenceQuotesBothBodiesWhereTheyPart(): void
    {
        $early = str_repeat('x', 100) . 'theme: light</p>';
        $now = str_repeat('x', 100) . "theme: dark\n</p>";
        $text = LeakReplay::difference($early, $now);
        self::assertStringStartsWith('the body differs from byte 107 (116 bytes early, 116 now)', $text);
        self::assertStringContainsString('early "…xxxxxxxxxxxxxtheme: light</p>"', $text);
        self::assertStringContainsString('now "…xxxxxxxxxxxxxtheme: dark </p>"', $text);
    }
}
