<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests;

use Ferry\Symfony\Tests\Support\App;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * The same public/index.php, with Ferry\Symfony\Runtime selected, outside Ferry: under
 * PHP's built-in web server (a web SAPI, as FPM is) and once from the CLI. The runtime is
 * then plain SymfonyRuntime.
 */
final class OutsideFerryTest extends TestCase
{
    public function testTheSameFrontControllerServesUnderAWebSapi(): void
    {
        $log = tempnam(sys_get_temp_dir(), 'ferry-symfony-php-s-');
        $public = App::dir() . '/public';
        // FERRY_RELAY set on purpose: a web SAPI is never a worker, whatever its environment says.
        $env = $this->env() + ['FERRY_RELAY' => 'pipes:3,4'];
        $proc = proc_open(
            [PHP_BINARY, '-d', 'variables_order=EGPCS', '-S', '127.0.0.1:0', '-t', $public, "$public/index.php"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']],
            $pipes,
            App::dir(),
            $env,
        );
        $this->assertIsResource($proc);
        try {
            $url = $this->waitForUrl($proc, $log);
            $client = new HttpClient($url);

            $data = App::json($client->get('/hello/fpm?a=1'));
            $this->assertSame(['fpm', ['a' => '1'], '', '/hello/fpm', '/index.php'], [$data['hello'], $data['query'], $data['base_url'], $data['path_info'], $data['script_name']]);

            $this->assertSame(['count' => 1], App::json($client->get('/session')));
            $this->assertSame(['count' => 2], App::json($client->get('/session')));

            $content = "uploaded under php -S\n";
            $up = App::json($client->postMultipart('/upload', [], ['doc' => ['filename' => 'a.txt', 'content' => $content]]));
            $this->assertSame([true, sha1($content)], [$up['files'][0]['valid'], $up['files'][0]['sha1']]);
            unlink($up['files'][0]['moved_to']);

            $this->assertSame("chunk 1\nchunk 2\nchunk 3\nchunk 4\nchunk 5\n", $client->get('/stream')['body']);
            $r = $client->get('/fail');
            $this->assertSame(500, $r['status']);
            $this->assertStringContainsString('<title>An Error Occurred: Internal Server Error</title>', $r['body']);
        } finally {
            $status = proc_get_status($proc);
            if ($status['running']) {
                posix_kill($status['pid'], SIGTERM);
            }
            proc_close($proc);
            unlink($log);
        }
    }

    public function testTheSameFrontControllerRunsOnceFromTheCli(): void
    {
        $proc = proc_open([PHP_BINARY, 'public/index.php'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, App::dir(), $this->env());
        $this->assertIsResource($proc);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $this->assertSame(0, proc_close($proc), $err);
        $this->assertSame("Symfony on Ferry\n", $out);
    }

    /** @return array<string, string> */
    private function env(): array
    {
        $env = array_filter(getenv(), static fn (string $k) => !str_starts_with($k, 'FERRY_') && !str_starts_with($k, 'APP_'), ARRAY_FILTER_USE_KEY);

        return $env + ['APP_ENV' => 'prod', 'APP_DEBUG' => '0', 'APP_VAR_DIR' => App::varDir(), 'APP_RUNTIME' => 'Ferry\Symfony\Runtime'];
    }

    /** @param resource $proc */
    private function waitForUrl($proc, string $log): string
    {
        $deadline = microtime(true) + 10;
        while (microtime(true) < $deadline) {
            if (preg_match('~Development Server \((http://127\.0\.0\.1:\d+)\) started~', (string) file_get_contents($log), $m)) {
                return $m[1];
            }
            if (!proc_get_status($proc)['running']) {
                break;
            }
            usleep(20000);
        }
        $this->fail("php -S did not start:\n" . file_get_contents($log));
    }
}
