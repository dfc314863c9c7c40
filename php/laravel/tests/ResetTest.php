<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests;

use Ferry\Laravel\Tests\Support\LaravelApp;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * One case per entry of the reset list in docs/laravel.md: a request changes that piece of
 * state (StateController::mutate), and the next request on the same worker, from another
 * client, must find it as it was after boot.
 */
final class ResetTest extends TestCase
{
    private static ?LaravelApp $app = null;

    public static function setUpBeforeClass(): void
    {
        self::$app = new LaravelApp(pool: "  num_workers: 1\n");
    }

    public static function tearDownAfterClass(): void
    {
        self::$app?->stop();
        self::$app = null;
    }

    /**
     * @return array<string, array{string, mixed}>
     */
    public static function resets(): array
    {
        return [
            'auth guards (Auth::login)' => ['user', null],
            'session store' => ['session', null],
            'config repository (config([...]))' => ['config', 'default'],
            'app locale (App::setLocale)' => ['locale', 'en'],
            'translator locale (App::setLocale)' => ['translator_locale', 'en'],
            'Carbon locale' => ['carbon_locale', 'en'],
            'view factory shared data (View::share)' => ['view_owner', 'nobody'],
            'view rendered with shared data' => ['rendered', '<p>owner: nobody</p>'],
            'database transaction level' => ['transaction_level', 0],
            'array cache store' => ['cached_owner', null],
            'log context (Log::withContext)' => ['log_context', []],
            'Str::snake() cache' => ['str_cache', []],
            'translator parsed keys' => ['parsed_keys', []],
            '$app->scoped() singleton resolved at boot' => ['request_counter', 0],
            'config("ferry.scoped") singleton resolved at boot' => ['boot_counter', 0],
            'singleton first resolved during a request' => ['lazy_counter', 0],
        ];
    }

    /**
     * @dataProvider resets
     */
    public function testStateChangedByOneRequestIsGoneInTheNext(string $field, mixed $expected): void
    {
        if ($field === 'transaction_level') {
            self::requireSqlite();
        }
        $mutated = LaravelApp::json((new HttpClient(self::$app->url()))->get('/mutate/alice'));
        self::assertNotEquals($expected, $mutated[$field], "mutate must change $field for this case to prove anything");
        $next = LaravelApp::json((new HttpClient(self::$app->url()))->get('/state'));
        self::assertSame($expected, $next[$field], json_encode($next));
    }

    public function testQueuedCookiesAreFlushed(): void
    {
        $mutated = (new HttpClient(self::$app->url()))->get('/mutate/alice');
        self::assertContains('owner_alice', LaravelApp::setCookieNames($mutated));
        $next = (new HttpClient(self::$app->url()))->get('/state');
        self::assertSame(['ferry_session'], LaravelApp::setCookieNames($next));
    }

    public function testBufferingLogHandlersAreFlushedAfterEachRequest(): void
    {
        (new HttpClient(self::$app->url()))->get('/mutate/alice');
        self::assertStringContainsString('buffered record of alice', self::$app->waitForFile('logs/buffered.log'));
    }

    public function testRouterHasNoCurrentRouteBeforeRouting(): void
    {
        (new HttpClient(self::$app->url()))->get('/mutate/alice');
        $state = LaravelApp::json((new HttpClient(self::$app->url()))->get('/state'));
        self::assertArrayHasKey('route_before_routing', $state);
        self::assertNull($state['route_before_routing'], 'a global middleware saw the previous request\'s route');
    }

    public function testPaginatorReadsTheCurrentRequest(): void
    {
        $state = LaravelApp::json((new HttpClient(self::$app->url()))->get('/state?page=2'));
        self::assertSame(self::$app->url() . '/state', $state['paginator_path']);
    }

    public function testUrlGeneratorForcedRootIsPerRequest(): void
    {
        $mutated = LaravelApp::json((new HttpClient(self::$app->url()))->get('/mutate/alice'));
        self::assertSame('http://alice.example/x', $mutated['url']);
        $next = LaravelApp::json((new HttpClient(self::$app->url()))->get('/state'));
        self::assertSame(self::$app->url() . '/x', $next['url']);
    }

    public function testTransactionLeftOpenIsRolledBackAndLogged(): void
    {
        self::requireSqlite();
        $line = 'request left a transaction open on connection';
        $before = substr_count(self::$app->server->log(), $line);
        (new HttpClient(self::$app->url()))->get('/mutate/alice');
        $deadline = microtime(true) + 5;
        while (substr_count(self::$app->server->log(), $line) === $before && microtime(true) < $deadline) {
            usleep(10_000);
        }
        self::assertGreaterThan($before, substr_count(self::$app->server->log(), $line), self::$app->server->log());
    }

    public function testSingletonResolvedAtBootIsShared(): void
    {
        // The documented counterpart: what boot resolved and nobody marked scoped is one
        // instance for the life of the worker.
        $before = LaravelApp::json((new HttpClient(self::$app->url()))->get('/state'))['shared_counter'];
        (new HttpClient(self::$app->url()))->get('/mutate/alice');
        self::assertSame($before + 1, LaravelApp::json((new HttpClient(self::$app->url()))->get('/state'))['shared_counter']);
    }

    public function testControllerIsBuiltForEachRequest(): void
    {
        // The controller takes the Request in its constructor; a controller cached on the
        // shared Route object would still hold the first request.
        $client = new HttpClient(self::$app->url());
        self::assertSame('controller/first', $client->get('/controller/first')['body']);
        self::assertSame('controller/second', $client->get('/controller/second')['body']);
    }

    private static function requireSqlite(): void
    {
        if (!\in_array('sqlite', \PDO::getAvailableDrivers(), true)) {
            self::markTestSkipped('pdo_sqlite is not installed (Debian: php8.2-sqlite3): the database reset is not tested');
        }
    }
}
