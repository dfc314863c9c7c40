<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests;

use Ferry\Symfony\Tests\Support\App;
use PHPUnit\Framework\TestCase;
use Ferry\Worker\Testing\HttpClient;

/**
 * A worker still running kernel.terminate listeners is not given the next request while
 * another worker idles (issue 31): two workers, Debian's Symfony 5.4.
 */
final class TerminateRoutingTest extends TestCase
{
    public function testNextRequestGoesToTheIdleWorkerWhileAListenerRuns(): void
    {
        $server = App::serve([], "  num_workers: 2\n");
        try {
            $client = new HttpClient($server->url);
            $id = bin2hex(random_bytes(4));
            // A listener far longer than a request: the next one cannot outlast it.
            $r = $client->get("/linger?ms=2000&id=$id");
            $this->assertSame(200, $r['status']);
            $busy = (int) $r['headers']['x-pid'][0];
            $next = App::json((new HttpClient($server->url))->get('/hello/b'))['pid'];
            $this->assertNotSame($busy, $next, 'the request after /linger waited for its terminate listener');
            $server->waitForLog("/terminate listener done: id=$id status=200/");
        } finally {
            $server->stop();
        }
    }
}
