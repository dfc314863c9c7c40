<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Testing\FerryServer;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * The relay settings are the SDK's: neither application code nor a program it starts
 * (`php bin/console ...`, which would take itself for a worker) sees them.
 */
final class RelayEnvironmentTest extends TestCase
{
    public function testRelaySettingsLeaveTheEnvironment(): void
    {
        $worker = __DIR__ . '/fixtures/env-worker.php';
        $server = new FerryServer("server:\n  address: %ADDR%\npool:\n  command: [php, $worker]\n  num_workers: 1\nadmin:\n  socket: %DIR%/admin.sock\n");
        try {
            $r = (new HttpClient($server->url))->get('/');
            self::assertSame(200, $r['status'], $r['body']);
            self::assertSame(['getenv' => [false, false], 'server' => [], 'child' => ''], json_decode($r['body'], true));
        } finally {
            $server->stop();
        }
    }
}
