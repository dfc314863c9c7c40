<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests;

use Ferry\Laravel\AppAutoloader;
use Ferry\Laravel\Tests\Support\LaravelApp;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * `php php/laravel/bin/ferry-laravel /srv/app` on an app without vendor/ (Debian's
 * framework, no `composer install`): the runner loads the app's own classes from its
 * composer.json's PSR-4 map, else `App\` => `app/`, so routes reach App\ controllers.
 */
final class NoVendorAppTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/ferry-laravel-novendor-' . getmypid() . '-' . bin2hex(random_bytes(4));
        self::copyTree(LaravelApp::appDir(), $this->dir, ['vendor', 'storage']);
        self::assertFileDoesNotExist($this->dir . '/vendor/autoload.php');
    }

    protected function tearDown(): void
    {
        LaravelApp::removeTree($this->dir);
    }

    public function testAppWithoutComposerJsonUsesLaravelsAppDirectory(): void
    {
        self::assertFileDoesNotExist($this->dir . '/composer.json');
        $this->assertServes($this->dir);
    }

    public function testAppWithComposerJsonUsesItsPsr4Map(): void
    {
        // Moved out of app/, so only the composer.json map can find App\Http\Kernel.
        rename($this->dir . '/app', $this->dir . '/src');
        file_put_contents($this->dir . '/composer.json', json_encode([
            'name' => 'test/app',
            'autoload' => ['psr-4' => ['App\\' => 'src/']],
        ]));
        $this->assertServes($this->dir);
    }

    /**
     * `php /path/to/ferry/php/laravel/bin/ferry-laravel /srv/app` typed in a terminal waited
     * in silence for Ferry's frames (or, given EOF, exited 0 without a word): it now boots
     * the app, so that what stops it shows, and says that Ferry starts it.
     */
    public function testRunByHandFromATerminalBootsTheAppAndSaysWhatStartsIt(): void
    {
        if (!is_executable('/usr/bin/script')) {
            self::markTestSkipped('util-linux script(1) gives the runner a terminal');
        }
        $runner = LaravelApp::packageDir() . '/bin/ferry-laravel';
        $env = array_filter(getenv(), static fn (string $k) => !str_starts_with($k, 'FERRY_'), ARRAY_FILTER_USE_KEY);
        $cmd = ['timeout', '20', 'script', '-qec', PHP_BINARY . ' ' . escapeshellarg($runner) . ' ' . escapeshellarg($this->dir), '/dev/null'];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        self::assertIsResource($proc);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        self::assertSame(0, proc_close($proc), $out);
        self::assertStringContainsString("the application in {$this->dir} boots. This is a Ferry worker", $out);
        self::assertStringContainsString("bin/ferry serve -c {$this->dir}/ferry.yaml", $out);
    }

    public function testInvalidComposerJsonIsRefusedWithWhatToFix(): void
    {
        file_put_contents($this->dir . '/composer.json', '{"autoload": ');
        $this->expectException(\RuntimeException::class);
        $this->expectExceptionMessage('composer.json is not valid JSON');
        AppAutoloader::map($this->dir);
    }

    public function testMapResolvesDirectoriesAgainstTheApp(): void
    {
        file_put_contents($this->dir . '/composer.json', '{"autoload": {"psr-4": {"App\\\\": "app/", "Lib\\\\": ["lib", "more/"]}}}');
        self::assertSame(
            ['App\\' => [$this->dir . '/app'], 'Lib\\' => [$this->dir . '/lib', $this->dir . '/more']],
            AppAutoloader::map($this->dir),
        );
    }

    private function assertServes(string $appDir): void
    {
        $app = new LaravelApp([], "  num_workers: 1\n", $appDir);
        try {
            $r = (new HttpClient($app->url()))->get('/hello/ferry');
            self::assertSame(200, $r['status'], $r['body'] . "\nserver log:\n" . $app->server->log());
            self::assertStringContainsString('ferry', $r['body']);
        } finally {
            $app->stop();
        }
    }

    /** @param list<string> $skip top-level entries left out */
    private static function copyTree(string $from, string $to, array $skip): void
    {
        mkdir($to, 0o700, true);
        foreach (scandir($from) as $entry) {
            if ($entry === '.' || $entry === '..' || \in_array($entry, $skip, true)) {
                continue;
            }
            if (is_dir("$from/$entry")) {
                self::copyTree("$from/$entry", "$to/$entry", []);
            } else {
                copy("$from/$entry", "$to/$entry");
            }
        }
    }
}
