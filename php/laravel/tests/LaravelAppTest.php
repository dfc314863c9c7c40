<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests;

use Ferry\Laravel\Tests\Support\LaravelApp;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * The test app's pages through a real `ferry serve` and bin/ferry-laravel, on Debian's
 * Laravel 8: what a user of the app would see under PHP-FPM.
 */
final class LaravelAppTest extends TestCase
{
    private static ?LaravelApp $app = null;

    public static function setUpBeforeClass(): void
    {
        self::$app = new LaravelApp();
    }

    public static function tearDownAfterClass(): void
    {
        self::$app?->stop();
        self::$app = null;
    }

    private static function client(): HttpClient
    {
        return new HttpClient(self::$app->url());
    }

    public function testRoutesAndRouteParameters(): void
    {
        $home = self::client()->get('/');
        self::assertSame(200, $home['status']);
        self::assertSame('home', $home['body']);
        self::assertSame(['text/html; charset=UTF-8'], $home['headers']['content-type']);
        self::assertCount(1, $home['headers']['date'] ?? [], 'one Date header, the server\'s');

        self::assertSame('Hello, ferry', self::client()->get('/hello/ferry')['body']);
    }

    public function testFormPost(): void
    {
        $r = self::client()->postForm('/form', ['name' => 'Ada', 'tags[]' => 'x']);
        self::assertSame(200, $r['status']);
        $data = LaravelApp::json($r);
        self::assertSame('Ada', $data['name']);
        self::assertSame(['name' => 'Ada', 'tags' => ['x']], $data['all']);
        self::assertSame('POST', $data['method']);
    }

    public function testJsonBodyIsTheInput(): void
    {
        $r = self::client()->request('POST', '/form', ['Content-Type' => 'application/json'], '{"name":"Grace","n":2}');
        self::assertSame(['name' => 'Grace', 'n' => 2], LaravelApp::json($r)['all']);
    }

    public function testMultipartUploadIsStoredAndMoved(): void
    {
        $r = self::client()->postMultipart('/upload', ['note' => 'two files'], [
            'doc' => ['filename' => 'report.txt', 'content' => "stored bytes\n", 'type' => 'text/plain'],
            'other' => ['filename' => 'other.txt', 'content' => "moved bytes\n", 'type' => 'text/plain'],
        ]);
        self::assertSame(200, $r['status'], $r['body']);
        $data = LaravelApp::json($r);
        self::assertTrue($data['valid']);
        self::assertSame('report.txt', $data['client_name']);
        self::assertSame('two files', $data['field']);
        self::assertMatchesRegularExpression('#^uploads/\w+\.txt$#', $data['stored']);
        self::assertSame("stored bytes\n", $data['stored_content']);
        self::assertSame("stored bytes\n", file_get_contents(self::$app->storage . '/app/' . $data['stored']));
        self::assertSame("moved bytes\n", $data['moved_content']);
        self::assertSame("moved bytes\n", file_get_contents(self::$app->storage . '/app/moved/moved.txt'));
        self::assertFalse($data['moved_twice'], 'a moved upload is no longer valid');
    }

    public function testCookiesKeepTheirAttributesAndComeBack(): void
    {
        $client = self::client();
        $set = $client->get('/cookie/set');
        $line = null;
        foreach ($set['headers']['set-cookie'] ?? [] as $candidate) {
            if (str_starts_with($candidate, 'flavor=')) {
                $line = $candidate;
            }
        }
        self::assertNotNull($line, 'Set-Cookie flavor: ' . json_encode($set['headers']));
        self::assertMatchesRegularExpression('/; expires=[^;]+; Max-Age=(600|599); path=\/; httponly; samesite=strict$/i', $line);
        // EncryptCookies encrypted it on the way out and decrypts it on the way in.
        self::assertStringNotContainsString('mint', $line);
        self::assertSame('flavor=mint', $client->get('/cookie/get')['body']);
        self::assertSame('flavor=none', self::client()->get('/cookie/get')['body']);
    }

    public function testSessionCounter(): void
    {
        $client = self::client();
        self::assertSame('count=1', $client->get('/session/counter')['body']);
        self::assertSame('count=2', $client->get('/session/counter')['body']);
        self::assertSame('count=3', $client->get('/session/counter')['body']);
        self::assertSame('count=1', self::client()->get('/session/counter')['body'], 'another client has its own session');
    }

    public function testNotFoundIsLaravelsPage(): void
    {
        $r = self::client()->get('/no/such/page');
        self::assertSame(404, $r['status']);
        self::assertStringContainsString('Not Found', $r['body']);
        self::assertStringStartsWith('text/html', $r['headers']['content-type'][0] ?? '');
    }

    public function testExceptionGivesLaravelsErrorPageAndTheWorkerLivesOn(): void
    {
        $pid = LaravelApp::json(self::client()->get('/runtime'))['pid'];
        $r = self::client()->get('/boom');
        self::assertSame(500, $r['status']);
        self::assertStringContainsString('Server Error', $r['body']);
        self::assertStringNotContainsString('boom from the test app', $r['body'], 'APP_DEBUG is off');
        self::$app->server->waitForLog('/boom from the test app/');
        self::assertSame('home', self::client()->get('/')['body']);
        self::assertSame($pid, LaravelApp::json(self::client()->get('/runtime'))['pid'], 'same worker process');
    }

    public function testQueuedCookieIsSentOnceToItsRequest(): void
    {
        $client = self::client();
        $r = $client->get('/cookie/queue?name=queued_once&value=v');
        self::assertContains('queued_once', LaravelApp::setCookieNames($r));
        self::assertNotContains('queued_once', LaravelApp::setCookieNames($client->get('/')));
    }

    public function testLoginAndLogout(): void
    {
        $client = self::client();
        self::assertSame('guest', $client->get('/whoami')['body']);
        self::assertSame('logged in as alice', $client->get('/login/1')['body']);
        self::assertSame('alice', $client->get('/whoami')['body']);
        self::assertSame('guest', self::client()->get('/whoami')['body']);
        self::assertSame('logged out', $client->get('/logout')['body']);
        self::assertSame('guest', $client->get('/whoami')['body']);
    }

    public function testConfigSetAtRuntimeLastsOneRequest(): void
    {
        $client = self::client();
        self::assertSame('probe=changed', $client->get('/config?set=changed')['body']);
        self::assertSame('probe=default', $client->get('/config')['body']);
    }

    public function testNotRunningInConsole(): void
    {
        $data = LaravelApp::json(self::client()->get('/runtime'));
        self::assertSame('cli', $data['sapi']);
        self::assertFalse($data['console']);
    }

    public function testRunningInConsoleFollowsTheUsersSetting(): void
    {
        $app = new LaravelApp(['APP_RUNNING_IN_CONSOLE' => 'true']);
        try {
            self::assertTrue(LaravelApp::json((new HttpClient($app->url()))->get('/runtime'))['console']);
        } finally {
            $app->stop();
        }
    }

    public function testTerminableMiddlewareRuns(): void
    {
        self::assertSame('home', self::client()->get('/terminate/middleware?tag=mw1')['body']);
        self::assertStringContainsString("mw1\n", self::$app->waitForFile('terminated-middleware.txt'));
    }

    public function testBladeView(): void
    {
        $r = self::client()->get('/view');
        self::assertSame(200, $r['status']);
        self::assertSame("<p>owner: nobody</p>\n", $r['body']);
    }
}
