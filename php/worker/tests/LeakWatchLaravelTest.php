<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Testing\HttpClient;
use Ferry\Worker\Tests\Support\LeakApp;
use PHPUnit\Framework\TestCase;

/**
 * The leak that started it: in php/laravel's test app (Debian's Laravel), one user's
 * Cookie::queue() ends up in every later answer when nothing resets the shared cookie jar.
 * The leak watch, given the container's shared instances through Worker::watch(), names
 * it; under php/laravel's own sandbox and reset list it does not.
 */
final class LeakWatchLaravelTest extends TestCase
{
    private ?LeakApp $app = null;
    private string $storage = '';

    protected function setUp(): void
    {
        if (!is_file('/usr/share/php/Illuminate/autoload.php')) {
            self::markTestSkipped("Debian's php-laravel-framework is not installed");
        }
    }

    protected function tearDown(): void
    {
        $this->app?->stop();
        $this->app = null;
        if ($this->storage !== '') {
            exec('rm -rf ' . escapeshellarg($this->storage));
        }
    }

    public function testCookieQueueLeakIsFoundWithoutTheReset(): void
    {
        $this->serve(reset: false);
        $leaked = $this->twoUsers();
        self::assertContains('owner_alice', $leaked, "the app must really leak: alice's cookie in bob's answer");

        $f = $this->app->waitForFinding('shared');
        $cookie = array_values(array_filter($this->app->findings(), static fn (array $f): bool => $f['subject'] === 'laravel[cookie]'));
        self::assertCount(1, $cookie, json_encode(array_column($this->app->findings(), 'message'), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
        self::assertSame(
            'laravel[cookie] (shared instance, Illuminate\\Cookie\\CookieJar) changed between requests: property queued (0 elements after warm-up, 2 elements now); first by GET /mutate/alice',
            $cookie[0]['message'],
        );
        self::assertSame(['GET', '/mutate/alice'], [$cookie[0]['method'], $cookie[0]['path']]);
        self::assertSame('shared', $f['kind']);
    }

    public function testNoCookieFindingUnderTheSandbox(): void
    {
        $this->serve(reset: true);
        self::assertNotContains('owner_alice', $this->twoUsers());
        $this->app->get('/');
        self::assertNotContains('laravel[cookie]', array_column($this->app->findings(), 'subject'));
    }

    private function serve(bool $reset): void
    {
        $this->storage = sys_get_temp_dir() . '/ferry-leak-laravel-' . bin2hex(random_bytes(4));
        mkdir($this->storage, 0o700);
        $env = ['APP_ENV' => 'production', 'APP_DEBUG' => '0', 'APP_STORAGE' => $this->storage, 'LEAK_LARAVEL_RESET' => $reset ? '1' : '0'];
        foreach (['SERVICES', 'PACKAGES', 'CONFIG', 'ROUTES', 'EVENTS'] as $cache) {
            $env["APP_{$cache}_CACHE"] = $this->storage . '/' . strtolower($cache) . '.php';
        }
        $this->app = new LeakApp('laravel.php', $env, warmup: 5);
        for ($i = 0; $i < 6; $i++) {
            $this->app->get('/');
        }
    }

    /**
     * Alice and Bob take turns, each queueing a cookie named after themselves
     * (StateController::mutate); returns the cookie names Bob's plain /state answer set.
     *
     * @return list<string>
     */
    private function twoUsers(): array
    {
        $alice = new HttpClient($this->app->server->url);
        $bob = new HttpClient($this->app->server->url);
        $alice->get('/mutate/alice');
        $seen = $bob->get('/state');
        $bob->get('/mutate/bob');
        $alice->get('/state');
        $names = [];
        foreach ($seen['headers']['set-cookie'] ?? [] as $line) {
            $names[] = trim(explode('=', $line, 2)[0]);
        }

        return $names;
    }
}
