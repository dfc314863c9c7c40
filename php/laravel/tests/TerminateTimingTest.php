<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests;

use Ferry\Laravel\Tests\Support\LaravelApp;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * app()->terminating() work runs after the answer has left (the SDK's after-response
 * hook), as after fastcgi_finish_request() under FPM: a 300 ms callback must not delay
 * the response by more than 50 ms, and must still run to its end.
 */
final class TerminateTimingTest extends TestCase
{
    public function testSlowTerminatingCallbackRunsAfterTheResponse(): void
    {
        $app = new LaravelApp();
        try {
            $client = new HttpClient($app->url());
            $client->get('/');
            $delays = [];
            // The best of three: one slow round on a shared machine is noise, a callback
            // run before the answer would make all three slow.
            for ($i = 0; $i < 3; $i++) {
                $start = hrtime(true);
                self::assertSame('home', $client->get('/')['body']);
                $baseline = (hrtime(true) - $start) / 1e9;

                $start = hrtime(true);
                $r = $client->get("/terminate/slow?tag=t$i");
                $elapsed = (hrtime(true) - $start) / 1e9;
                $answeredAt = microtime(true);
                self::assertSame('answered', $r['body']);

                $finishedAt = (float) $app->waitForFile("terminated-t$i.txt");
                self::assertGreaterThan($answeredAt, $finishedAt, 'the callback finished after the client had its answer');
                $delays[] = $elapsed - $baseline;
            }
            self::assertLessThan(0.050, min($delays), 'delay over a plain request, seconds: ' . json_encode($delays));
        } finally {
            $app->stop();
        }
    }
}
