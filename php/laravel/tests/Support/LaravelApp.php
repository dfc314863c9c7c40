<?php

declare(strict_types=1);

namespace Ferry\Laravel\Tests\Support;

use Ferry\Worker\Testing\FerryServer;

/**
 * The test app (tests/app) under a real `ferry serve` running bin/ferry-laravel, with its
 * storage and Laravel's cache files in a private temp directory per test class.
 */
final class LaravelApp
{
    public readonly FerryServer $server;
    public readonly string $storage;

    /**
     * @param array<string, string> $env  added to the app's environment
     * @param string               $pool more `pool:` keys, each line indented by two spaces
     * @param string|null          $appDir another application than tests/app
     */
    public function __construct(array $env = [], string $pool = "  num_workers: 1\n", ?string $appDir = null)
    {
        $this->storage = sys_get_temp_dir() . '/ferry-laravel-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($this->storage, 0o700);
        $env += [
            'APP_ENV' => 'production',
            'APP_DEBUG' => '0',
            'APP_STORAGE' => $this->storage,
        ];
        // Laravel writes its manifests under bootstrap/cache unless told otherwise; the
        // config and route caches must not be picked up from a benchmark run either.
        foreach (['SERVICES', 'PACKAGES', 'CONFIG', 'ROUTES', 'EVENTS'] as $cache) {
            $env["APP_{$cache}_CACHE"] ??= $this->storage . '/' . strtolower($cache) . '.php';
        }
        $envYaml = '';
        foreach ($env as $name => $value) {
            $envYaml .= "    $name: " . json_encode($value, JSON_UNESCAPED_SLASHES) . "\n";
        }
        $command = json_encode(['php', self::packageDir() . '/bin/ferry-laravel', $appDir ?? self::appDir()], JSON_UNESCAPED_SLASHES);
        $yaml = "server:\n  address: %ADDR%\n"
            . "admin:\n  socket: \"\"\n"
            . "pool:\n  command: $command\n"
            . "  env:\n$envYaml"
            . $pool;
        try {
            $this->server = new FerryServer($yaml);
        } catch (\Throwable $e) {
            self::removeTree($this->storage);
            throw $e;
        }
    }

    public static function appDir(): string
    {
        return \dirname(__DIR__) . '/app';
    }

    public static function packageDir(): string
    {
        return \dirname(__DIR__, 2);
    }

    public function url(): string
    {
        return $this->server->url;
    }

    public function stop(): void
    {
        $this->server->stop();
        self::removeTree($this->storage);
    }

    /** Waits for a file the app writes after answering; returns its contents. */
    public function waitForFile(string $relative, float $timeout = 5.0): string
    {
        $path = $this->storage . '/' . $relative;
        $deadline = microtime(true) + $timeout;
        // PHP caches stat results: a file seen just created and still empty would stay
        // empty to every later check.
        while (clearstatcache(true, $path) || !is_file($path) || filesize($path) === 0) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException("$path never appeared; server log:\n" . $this->server->log());
            }
            usleep(5_000);
        }

        return (string) file_get_contents($path);
    }

    /**
     * @param array{status: int, headers: array<string, list<string>>, body: string} $response
     * @return array<string, mixed>
     */
    public static function json(array $response): array
    {
        $data = json_decode($response['body'], true);
        if (!\is_array($data)) {
            throw new \RuntimeException("not a JSON object (status {$response['status']}): " . substr($response['body'], 0, 2000));
        }

        return $data;
    }

    /**
     * Names of the cookies a response sets.
     *
     * @param array{status: int, headers: array<string, list<string>>, body: string} $response
     * @return list<string>
     */
    public static function setCookieNames(array $response): array
    {
        $names = [];
        foreach ($response['headers']['set-cookie'] ?? [] as $line) {
            $names[] = trim(explode('=', $line, 2)[0]);
        }

        return $names;
    }

    public static function removeTree(string $dir): void
    {
        if (!is_dir($dir)) {
            return;
        }
        $it = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST);
        foreach ($it as $file) {
            $file->isDir() && !$file->isLink() ? @rmdir($file->getPathname()) : @unlink($file->getPathname());
        }
        @rmdir($dir);
    }
}
