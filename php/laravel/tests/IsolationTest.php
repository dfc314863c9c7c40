<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests;

use Ferry\Laravel\Tests\Support\LaravelApp;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * Two users interleave requests on one worker process. Each one logs in, fills its
 * session, queues a cookie and sets config at runtime (StateController::mutate); neither
 * may ever see the other's user, session, cookie (sent by the browser or queued by the
 * app) or config. This is the test that catches the Cookie::queue leak: with the reset
 * off, alice's queued cookie is in every later response, bob's included.
 */
final class IsolationTest extends TestCase
{
    private ?LaravelApp $app = null;

    protected function setUp(): void
    {
        $this->app = new LaravelApp(pool: "  num_workers: 1\n");
    }

    protected function tearDown(): void
    {
        $this->app?->stop();
        $this->app = null;
    }

    public function testTwoUsersOnOneWorkerNeverSeeEachOther(): void
    {
        $users = ['alice' => new HttpClient($this->app->url()), 'bob' => new HttpClient($this->app->url())];
        for ($round = 1; $round <= 3; $round++) {
            foreach (['alice' => 'bob', 'bob' => 'alice'] as $me => $other) {
                $mutated = $users[$me]->get("/mutate/$me");
                $this->assertOwnState($me, $other, $mutated, fresh: true);
                self::assertContains("owner_$me", LaravelApp::setCookieNames($mutated));

                $seen = $users[$other]->get('/state');
                $this->assertOwnState($other, $me, $seen, fresh: false);
            }
        }
        $stranger = LaravelApp::json((new HttpClient($this->app->url()))->get('/state'));
        self::assertNull($stranger['user']);
        self::assertNull($stranger['session']);
        self::assertSame([], $stranger['cookies']);
        self::assertSame('default', $stranger['config']);
    }

    /**
     * @param array{status: int, headers: array<string, list<string>>, body: string} $response
     */
    private function assertOwnState(string $me, string $other, array $response, bool $fresh): void
    {
        self::assertSame(200, $response['status'], $response['body']);
        $state = LaravelApp::json($response);
        $context = "$me's " . ($fresh ? 'mutate' : 'state') . ' request: ' . json_encode($state) . ' Set-Cookie: ' . json_encode(LaravelApp::setCookieNames($response));
        self::assertNotContains("owner_$other", LaravelApp::setCookieNames($response), "$other's queued cookie leaked into $context");
        self::assertNotContains("owner_$other", $state['cookies'], $context);
        self::assertNotSame($other, $state['user'], $context);
        self::assertNotSame($other, $state['session'], $context);
        self::assertNotSame($other, $state['config'], $context);
        if ($fresh) {
            self::assertSame($me, $state['user'], $context);
            self::assertSame($me, $state['session'], $context);
            self::assertSame($me, $state['config'], $context);

            return;
        }
        // Before its first mutate a user has nothing; afterwards only its own user, session
        // and cookie. Runtime config never outlives its request.
        self::assertContains($state['user'], [null, $me], $context);
        self::assertContains($state['session'], [null, $me], $context);
        self::assertSame($state['user'] === null ? [] : ["owner_$me"], $state['cookies'], $context);
        self::assertSame('default', $state['config'], $context);
    }
}
