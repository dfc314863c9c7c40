<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Testing\FerryServer;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * A Slim 4 app (a PSR-15 handler) through Psr7Worker under a real `ferry serve`. Debian ships
 * Slim 3 only, so this runs where Slim 4 is installed with Composer:
 *
 *     mkdir /tmp/slim && cd /tmp/slim && composer require slim/slim:^4 slim/psr7
 *     SLIM_AUTOLOAD=/tmp/slim/vendor/autoload.php phpunit -c php/worker/phpunit.xml.dist --filter SlimAppTest
 */
final class SlimAppTest extends TestCase
{
    private ?FerryServer $server = null;

    protected function setUp(): void
    {
        $autoload = getenv('SLIM_AUTOLOAD');
        if (!\is_string($autoload) || !is_file($autoload)) {
            self::markTestSkipped('Slim 4 is not installed (Debian ships Slim 3): set SLIM_AUTOLOAD to a Composer autoloader with slim/slim ^4 and slim/psr7, see this test\'s doc comment');
        }
        $worker = __DIR__ . '/fixtures/slim-worker.php';
        $env = json_encode($autoload);
        $this->server = new FerryServer("server:\n  address: %ADDR%\npool:\n  command: [php, $worker]\n  num_workers: 1\n  env:\n    SLIM_AUTOLOAD: $env\nadmin:\n  socket: %DIR%/admin.sock\n");
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
    }

    public function testRoutesAndStateAcrossRequests(): void
    {
        $client = new HttpClient($this->server->url);
        $first = $client->get('/hello/ferry');
        self::assertSame([200, 'Hello, ferry #1'], [$first['status'], $first['body']]);
        self::assertSame(['text/plain'], $first['headers']['content-type']);
        self::assertSame('Hello, you #2', $client->get('/hello/you')['body'], 'the app stays booted between requests');
        self::assertSame(404, $client->get('/nowhere')['status']);
        $posted = $client->postForm('/form', ['a' => '1', 'b' => 'two']);
        self::assertSame([201, '{"a":"1","b":"two"}'], [$posted['status'], $posted['body']]);
    }
}
