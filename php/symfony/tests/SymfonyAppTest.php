<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests;

use Ferry\Symfony\Tests\Support\App;
use Ferry\Worker\Testing\FerryServer;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * The test app's pages through a real `ferry serve`, one worker, Debian's Symfony 5.4.
 */
final class SymfonyAppTest extends TestCase
{
    private static FerryServer $server;

    public static function setUpBeforeClass(): void
    {
        self::$server = App::serve(
            ['APP_LOG_RESETS' => '1'],
            "  num_workers: 1\n",
            "  trusted_proxies: [127.0.0.1/32]\n",
        );
    }

    public static function tearDownAfterClass(): void
    {
        self::$server->stop();
    }

    private function client(): HttpClient
    {
        return new HttpClient(self::$server->url);
    }

    public function testRoutingControllerAndServerParameters(): void
    {
        $r = $this->client()->get('/hello/w%C3%B6rld?a=1&b%5B%5D=2', ['X-Custom' => 'yes']);
        $this->assertSame(200, $r['status'], $r['body']);
        $this->assertSame(['application/json'], $r['headers']['content-type']);
        $data = App::json($r);
        $host = parse_url(self::$server->url, PHP_URL_HOST) . ':' . parse_url(self::$server->url, PHP_URL_PORT);
        $this->assertSame('wörld', $data['hello']);
        $this->assertSame(['a' => '1', 'b' => ['2']], $data['query']);
        $this->assertSame('/hello/w%C3%B6rld', $data['path_info']);
        $this->assertSame('', $data['base_url']);
        $this->assertSame('/index.php', $data['script_name']);
        $this->assertSame("http://$host/hello/w%C3%B6rld?a=1&b%5B0%5D=2", $data['uri'], 'Symfony normalizes the query string');
        $this->assertSame($host, $data['host']);
        $this->assertSame('127.0.0.1', $data['client_ip']);
        $this->assertFalse($data['secure']);
        $this->assertSame('yes', $data['header']);

        // The front controller's own path works as under FPM.
        $data = App::json($this->client()->get('/index.php/hello/x'));
        $this->assertSame(['x', '/index.php', '/hello/x'], [$data['hello'], $data['base_url'], $data['path_info']]);
    }

    public function testSchemeAndClientAddressComeFromTheServerNotFromSymfony(): void
    {
        // 127.0.0.1 is a trusted proxy in this server's config: Ferry applies its
        // X-Forwarded-* and Symfony sees the result, with no trusted_proxies of its own.
        $data = App::json($this->client()->get('/hello/p', ['X-Forwarded-Proto' => 'https', 'X-Forwarded-For' => '203.0.113.9', 'X-Forwarded-Host' => 'shop.example']));
        $this->assertSame(['https', true, '203.0.113.9', 'shop.example'], [$data['scheme'], $data['secure'], $data['client_ip'], $data['host']]);
        $this->assertSame('https://shop.example/hello/p', $data['uri']);
    }

    public function testFormPost(): void
    {
        $r = $this->client()->request('POST', '/form', ['Content-Type' => 'application/x-www-form-urlencoded'], 'name=Ann+Lee&tags%5B%5D=a&tags%5B%5D=b&meta%5Bk%5D=v');
        $this->assertSame(201, $r['status'], $r['body']);
        $this->assertSame(['name' => 'Ann Lee', 'fields' => ['name' => 'Ann Lee', 'tags' => ['a', 'b'], 'meta' => ['k' => 'v']]], App::json($r));

        $r = $this->client()->postForm('/form', ['other' => 'x']);
        $this->assertSame(422, $r['status']);
        $this->assertSame(['errors' => ['name' => 'required']], App::json($r));
    }

    public function testJsonBody(): void
    {
        $r = $this->client()->request('POST', '/json', ['Content-Type' => 'application/json'], '{"items":[1,2],"ok":true}');
        $this->assertSame(200, $r['status'], $r['body']);
        $this->assertSame(['received' => ['items' => [1, 2], 'ok' => true], 'type' => 'json'], App::json($r));
    }

    public function testUploadIsValidAndMovedWithMove(): void
    {
        $content = random_bytes(3000) . "end\n";
        $r = $this->client()->postMultipart('/upload', ['title' => 'Report'], [
            'doc' => ['filename' => 'report.bin', 'content' => $content, 'type' => 'application/octet-stream'],
        ]);
        $this->assertSame(200, $r['status'], $r['body']);
        $data = App::json($r);
        $this->assertSame(['title' => 'Report'], $data['fields']);
        $this->assertCount(1, $data['files']);
        $file = $data['files'][0];
        $this->assertSame(['doc', 'report.bin', true, 0], [$file['field'], $file['name'], $file['valid'], $file['error']]);
        $this->assertSame(\strlen($content), $file['size']);
        $this->assertSame(sha1($content), $file['sha1']);
        $this->assertStringStartsWith(App::varDir() . '/uploads/', $file['moved_to']);
        $this->assertSame($content, file_get_contents($file['moved_to']));
        $this->assertFalse($file['tmp_left'], 'move() must move the server\'s temp file, not copy it');
        $this->assertFalse($file['valid_after_move'], 'a moved upload is no longer valid, as with move_uploaded_file()');
        unlink($file['moved_to']);
    }

    public function testCookiesKeepEveryAttribute(): void
    {
        $r = $this->client()->get('/cookies/set');
        $this->assertSame(200, $r['status']);
        $cookies = $r['headers']['set-cookie'] ?? [];
        $this->assertCount(2, $cookies, implode("\n", $cookies));
        // Symfony 5.4 writes the date 02-Jan-2030, 6.x 02 Jan 2030 (RFC 9110's form).
        $this->assertMatchesRegularExpression(
            '~^pref=dark%20mode%3B%20v%3D1; expires=Wed, (?:02-Jan-2030|02 Jan 2030) 03:04:05 GMT; Max-Age=\d+; path=/app; domain=example\.test; secure; httponly; samesite=strict$~',
            $cookies[0],
        );
        $this->assertSame('plain=x; path=/; httponly; samesite=lax', $cookies[1]);

        $r = $this->client()->get('/cookies/read', ['Cookie' => 'a=1; b=x%20y; c.d=e']);
        $this->assertSame(['a' => '1', 'b' => 'x y', 'c_d' => 'e'], App::json($r));
    }

    public function testSessionCounter(): void
    {
        $user = $this->client();
        $first = $user->get('/session');
        $this->assertSame(['count' => 1], App::json($first));
        $sessionCookie = array_values(array_filter($first['headers']['set-cookie'] ?? [], static fn (string $c) => str_starts_with($c, 'PHPSESSID=')));
        $this->assertCount(1, $sessionCookie, 'the session cookie is sent by Symfony, not by PHP\'s session extension');
        $this->assertMatchesRegularExpression('~^PHPSESSID=[\w,-]{20,}; path=/; httponly; samesite=lax$~', $sessionCookie[0]);
        $this->assertSame(['count' => 2], App::json($user->get('/session')));
        $third = $user->get('/session');
        $this->assertSame(['count' => 3], App::json($third));
        $this->assertArrayNotHasKey('set-cookie', $third['headers'], 'an unchanged session id is not sent again');

        $this->assertSame(['count' => 1], App::json($this->client()->get('/session')), 'another user starts a session of their own');
    }

    public function testStreamedResponse(): void
    {
        $r = $this->client()->get('/stream');
        $this->assertSame(200, $r['status']);
        $this->assertSame("chunk 1\nchunk 2\nchunk 3\nchunk 4\nchunk 5\n", $r['body']);
        $this->assertSame(['text/plain; charset=UTF-8'], $r['headers']['content-type']);
    }

    public function testBinaryFileResponseWithRange(): void
    {
        $file = file_get_contents(App::dir() . '/data/report.txt');
        $r = $this->client()->get('/file');
        $this->assertSame(200, $r['status']);
        $this->assertSame($file, $r['body']);
        $this->assertSame(['attachment; filename=report.txt'], $r['headers']['content-disposition']);

        $r = $this->client()->get('/file', ['Range' => 'bytes=0-8']);
        $this->assertSame(206, $r['status']);
        $this->assertSame(substr($file, 0, 9), $r['body']);
        $this->assertSame(['bytes 0-8/' . \strlen($file)], $r['headers']['content-range']);
    }

    public function testNotFoundAndExceptionGiveSymfonysErrorPagesAndTheWorkerLivesOn(): void
    {
        $pid = App::json($this->client()->get('/hello/a'))['pid'];

        $r = $this->client()->get('/no/such/page');
        $this->assertSame(404, $r['status']);
        $this->assertStringContainsString('<title>An Error Occurred: Not Found</title>', $r['body']);

        $r = $this->client()->get('/fail');
        $this->assertSame(500, $r['status']);
        $this->assertStringContainsString('<title>An Error Occurred: Internal Server Error</title>', $r['body'], 'Symfony\'s error page, not the worker\'s plain 500');
        self::$server->waitForLog('/Uncaught PHP Exception RuntimeException: \\\\?"controller failed on purpose/');

        $this->assertSame($pid, App::json($this->client()->get('/hello/b'))['pid'], 'the same worker serves on');
    }

    public function testKernelTerminateRunsAfterTheResponseIsSent(): void
    {
        $client = $this->client();
        $baseline = INF;
        for ($i = 0; $i < 3; ++$i) {
            $t = microtime(true);
            $this->assertSame(200, $client->get('/linger?ms=0')['status']);
            $baseline = min($baseline, microtime(true) - $t);
        }

        // Up to three tries, so that one scheduling hiccup on a busy machine is not taken
        // for the listener's 300 ms, which every try would show if it delayed the answer.
        for ($try = 1; ; ++$try) {
            $id = bin2hex(random_bytes(4));
            $t = microtime(true);
            $r = $client->get("/linger?ms=300&id=$id");
            $received = microtime(true);
            $this->assertSame(200, $r['status']);
            $delay = ($received - $t) - $baseline;
            if ($delay < 0.050 || $try === 3) {
                break;
            }
            // One worker: the next try would wait for this listener.
            self::$server->waitForLog("/terminate listener done: id=$id /");
        }
        $this->assertLessThan(0.050, $delay, sprintf('a 300 ms terminate listener delayed the response: %.1f ms vs %.1f ms', ($received - $t) * 1000, $baseline * 1000));

        $m = self::$server->waitForLog("/terminate listener done: id=$id status=200 at=([\\d.]+)/");
        $this->assertGreaterThan($received, (float) $m[1], 'the listener finished after the client had its response');
    }

    public function testResetInterfaceServiceIsFreshOnEveryRequestAndResetRightAfterIt(): void
    {
        $client = $this->client();
        $first = App::json($client->get('/reset-probe'));
        $this->assertSame(1, $first['queued']);
        for ($i = 1; $i <= 3; ++$i) {
            // The reset of the request just answered is logged before the next request
            // is sent: it runs after the response, not when the next request arrives.
            self::$server->waitForLog(sprintf('/cookie queue reset #%d pid=%d"/', $first['resets'] + $i, $first['pid']));
            $next = App::json($client->get('/reset-probe'));
            $this->assertSame(1, $next['queued'], 'nothing queued by an earlier request is left');
            $this->assertSame($first['resets'] + $i, $next['resets'], 'exactly one reset per request');
            $this->assertSame($first['pid'], $next['pid']);
        }
    }
}
