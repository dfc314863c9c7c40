<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests;

use Ferry\Symfony\Tests\Support\App;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * The worker's life as Ferry runs it: recycled after max_jobs, replaced after a fatal
 * error or on reload, refused at start when the kernel cannot boot or Fiber mode is on.
 */
final class LifecycleTest extends TestCase
{
    public function testMaxJobsRecyclesAndAFatalErrorGives500AndANewWorker(): void
    {
        $server = App::serve([], "  num_workers: 1\n  max_jobs: 3\n  php:\n    ini: {memory_limit: 48M}\n");
        try {
            $client = new HttpClient($server->url);
            $pid = static fn (): int => App::json($client->get('/hello/x'))['pid'];
            $first = [$pid(), $pid(), $pid()];
            $this->assertCount(1, array_unique($first), 'one worker serves its max_jobs requests');
            $second = $pid();
            $this->assertNotSame($first[0], $second, 'then a new one takes over');

            $r = $client->get('/fatal');
            // The application failed, not the infrastructure: 500, as under FPM.
            $this->assertSame(500, $r['status']);
            $server->waitForLog('/Allowed memory size of 50331648 bytes exhausted/');
            $third = $pid();
            $this->assertNotSame($second, $third, 'the worker that died is replaced');
            $this->assertSame(['count' => 1], App::json($client->get('/session')), 'and serves normally');
        } finally {
            $server->stop();
        }
    }

    public function testReloadReplacesTheWorkerAndSessionsSurviveIt(): void
    {
        $server = App::serve([], "  num_workers: 1\n");
        try {
            $client = new HttpClient($server->url);
            $this->assertSame(['count' => 1], App::json($client->get('/session')));
            $before = App::json($client->get('/hello/x'))['pid'];
            posix_kill($server->pid(), SIGHUP);
            $server->waitForLog('/reload done/');
            $this->assertNotSame($before, App::json($client->get('/hello/x'))['pid']);
            $this->assertSame(['count' => 2], App::json($client->get('/session')), 'the native file handler keeps sessions on disk');
        } finally {
            $server->stop();
        }
    }

    public function testOutputWhileBootingGoesToTheLogAndSessionsStillWork(): void
    {
        // Output before the handshake would reach the CLI's STDOUT, after which PHP
        // counts headers as sent and Symfony's native session storage refuses to start.
        $server = App::serve(['APP_BOOT_NOISE' => '1'], "  num_workers: 1\n");
        try {
            $client = new HttpClient($server->url);
            $r = $client->get('/session');
            $this->assertSame(200, $r['status'], $r['body']);
            $this->assertSame(['count' => 1], App::json($r));
            $this->assertSame(['count' => 2], App::json($client->get('/session')));
            $server->waitForLog('/output while booting/');
        } finally {
            $server->stop();
        }
    }

    public function testAKernelThatCannotBootStopsFerryAtStartWithItsError(): void
    {
        // A var dir below a regular file: the kernel cannot create its cache directory.
        $file = tempnam(sys_get_temp_dir(), 'ferry-symfony-');
        try {
            App::serve(['APP_VAR_DIR' => "$file/var"], "  num_workers: 1\n");
            $this->fail('ferry started although the kernel cannot boot');
        } catch (\RuntimeException $e) {
            $this->assertStringContainsString('ferry did not start', $e->getMessage());
            $this->assertMatchesRegularExpression('/Unable to (create|write in) the "cache" directory/', $e->getMessage());
        } finally {
            unlink($file);
        }
    }

    public function testFiberModeIsRefusedWithTheReason(): void
    {
        try {
            App::serve([], "  num_workers: 1\n  fibers: true\n");
            $this->fail('ferry started a Symfony worker in Fiber mode');
        } catch (\RuntimeException $e) {
            $this->assertStringContainsString('cannot run in Fiber mode', $e->getMessage());
        }
    }
}
