<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Tests\Support\LeakApp;
use PHPUnit\Framework\TestCase;

/**
 * The leak watch (pool.leak_watch) against one real app per kind of leak, served by a real
 * `ferry serve`: each leak is found once, named, and blamed on the request that causes it,
 * and read back through `ferry leaks --json`. Every app first serves clean requests, so
 * a finding can only come from the leaky route.
 */
final class LeakWatchTest extends TestCase
{
    private ?LeakApp $app = null;

    protected function tearDown(): void
    {
        $this->app?->stop();
        $this->app = null;
    }

    public function testStaticArrayThatGrows(): void
    {
        $this->serve('static-array.php', ['/add'], 6);
        $f = $this->app->waitForFinding('static');
        self::assertSame('App\\Registry::$items', $f['subject']);
        self::assertSame('App\\Registry::$items grows by 1 element per request (3 elements now); first by GET /add', $f['message']);
        self::assertSame(['GET', '/add'], [$f['method'], $f['path']]);
        $this->assertOnly(['static']);
    }

    public function testGlobalSetByARequest(): void
    {
        $this->serve('global.php', ['/login?user=alice']);
        $f = $this->app->waitForFinding('global');
        self::assertSame('$current_user', $f['subject']);
        self::assertSame('GET /login set the global $current_user and did not unset it (now "alice")', $f['message']);
        $this->assertOnly(['global']);
    }

    public function testIniChange(): void
    {
        $this->serve('ini.php', ['/export']);
        $f = $this->app->waitForFinding('ini');
        self::assertSame('memory_limit', $f['subject']);
        self::assertMatchesRegularExpression('/^GET \/export changed ini memory_limit \(\S+ → 512M\) and did not restore it$/', $f['message']);
        $this->assertOnly(['ini']);
    }

    public function testTimezone(): void
    {
        $this->serve('timezone.php', ['/report']);
        $f = $this->app->waitForFinding('timezone');
        self::assertSame('GET /report changed the default timezone (UTC → Asia/Tokyo) and did not restore it', $f['message']);
        self::assertSame('/report', $f['path']);
        $this->assertOnly(['timezone']);
    }

    public function testDescriptorsThatStayOpen(): void
    {
        $listener = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($listener, false), ':'), 1);
        $this->serve('fd.php', ['/connect'], 4, ['LEAK_PORT' => (string) $port]);
        $f = $this->app->waitForFinding('fd');
        self::assertMatchesRegularExpression("/^open fds grow by 1 per request \\(\\d+ now: 3 sockets to 127\\.0\\.0\\.1:$port\\); first by GET \\/connect$/", $f['message']);
        $this->assertOnly(['fd']);
        fclose($listener);
    }

    public function testErrorHandlerStackThatGrows(): void
    {
        $this->serve('handlers.php', ['/page']);
        $f = $this->app->waitForFinding('error_handler');
        self::assertMatchesRegularExpression('/^the error handler stack grows: GET \/page calls set_error_handler\(\) \(now closure at .*handlers\.php:\d+\) and never restores the previous handler$/', $f['message']);
        $this->assertOnly(['error_handler']);
    }

    /**
     * The Laravel Cookie::queue leak's shape: a shared service from a container keeps what
     * one user's request queued, and sends it with the next user's answer.
     */
    public function testSharedServiceKeepsTheLastUsersValue(): void
    {
        $this->serve('container.php', []);
        $alice = $this->app->client->get('/login?user=alice');
        $bob = $this->app->client->get('/');
        self::assertStringContainsString('remember_user=alice', implode("\n", $bob['headers']['set-cookie'] ?? []), 'the app must really leak');
        $this->app->get('/login?user=bob');
        $f = $this->app->waitForFinding('shared');
        self::assertSame('container[cookies]', $f['subject']);
        self::assertSame('container[cookies] (shared instance, CookieQueue) changed between requests: property queued (0 elements after warm-up, 1 element now); first by GET /login', $f['message']);
        self::assertSame(200, $alice['status']);
        $this->assertOnly(['shared']);
    }

    /** Without Worker::watch() the same leak is out of sight: the hook is what finds it. */
    public function testSharedServiceIsOnlySeenWhenWatched(): void
    {
        $this->serve('container.php', ['/login?user=alice', '/login?user=bob'], 3, ['LEAK_WATCH_CONTAINER' => '0']);
        $this->app->get('/');
        self::assertSame([], $this->app->findings());
    }

    /**
     * At the default kind of setting, a check after every Nth request and the next: the
     * growth is still found, and the pair names the request.
     */
    public function testSampledChecksStillNameTheRequest(): void
    {
        $this->app = new LeakApp('static-array.php', every: 8, warmup: 3);
        $this->app->hammer(['/'], 3);
        $this->app->hammer(['/add'], 40);
        $f = $this->app->waitForFinding('static');
        self::assertMatchesRegularExpression('/^App\\\\Registry::\$items grows by 1 element per request \(\d+ elements now\); first by GET \/add$/', $f['message']);
        self::assertSame('/add', $f['path']);
    }

    /**
     * @param list<string> $leaky requests that leak, each sent $times after the clean ones
     * @param array<string, string> $env
     */
    private function serve(string $fixture, array $leaky, int $times = 3, array $env = []): void
    {
        $this->app = new LeakApp($fixture, $env);
        foreach (['/', '/', '/', '/', '/'] as $path) {
            $this->app->get($path); // warm-up (3) and two clean checks
        }
        for ($i = 0; $i < $times; $i++) {
            foreach ($leaky as $path) {
                $this->app->get($path);
            }
        }
    }

    /**
     * No other kind of finding, once the worker has served a few more requests (so a
     * late one would have arrived).
     *
     * @param list<string> $kinds
     */
    private function assertOnly(array $kinds): void
    {
        $this->app->get('/');
        $this->app->get('/');
        $found = $this->app->findings();
        self::assertSame($kinds, array_column($found, 'kind'), json_encode(array_column($found, 'message'), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
    }
}
