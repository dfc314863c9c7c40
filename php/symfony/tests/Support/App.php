<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests\Support;

use Ferry\Worker\Testing\FerryServer;

/**
 * The test app (tests/app) served by a real `ferry serve`, with the Symfony cache,
 * sessions and uploads in one temp directory per test run: the container is compiled
 * once, by the first worker that boots.
 */
final class App
{
    private static ?string $varDir = null;

    public static function dir(): string
    {
        return \dirname(__DIR__) . '/app';
    }

    public static function varDir(): string
    {
        if (self::$varDir === null) {
            self::$varDir = sys_get_temp_dir() . '/ferry-symfony-app-' . getmypid() . '-' . bin2hex(random_bytes(3));
            mkdir(self::$varDir, 0o700);
            $dir = self::$varDir;
            register_shutdown_function(static fn () => self::removeTree($dir));
        }

        return self::$varDir;
    }

    /**
     * @param array<string, string> $env   added to (or replacing) the app's environment
     * @param string               $pool  more `pool:` keys, each line indented by two spaces
     * @param string               $server more `server:` keys, likewise
     */
    public static function serve(array $env = [], string $pool = '', string $server = ''): FerryServer
    {
        $env += [
            'APP_ENV' => 'prod',
            'APP_DEBUG' => '0',
            'APP_VAR_DIR' => self::varDir(),
            'APP_RUNTIME' => 'Ferry\Symfony\Runtime',
        ];
        $envYaml = '';
        foreach ($env as $name => $value) {
            $envYaml .= "    $name: " . json_encode($value, JSON_UNESCAPED_SLASHES) . "\n";
        }
        $yaml = "server:\n  address: %ADDR%\n$server"
            . "admin:\n  socket: \"\"\n"
            . "pool:\n  dir: " . json_encode(self::dir(), JSON_UNESCAPED_SLASHES) . "\n"
            . "  command: php public/index.php\n"
            . "  env:\n$envYaml"
            . $pool;

        return new FerryServer($yaml);
    }

    /**
     * @param array{status: int, headers: array<string, list<string>>, body: string} $response
     * @return array<string, mixed>
     */
    public static function json(array $response): array
    {
        $data = json_decode($response['body'], true);
        if (!\is_array($data)) {
            throw new \RuntimeException("not a JSON object (status {$response['status']}): {$response['body']}");
        }

        return $data;
    }

    private static function removeTree(string $dir): void
    {
        if (!is_dir($dir)) {
            return;
        }
        $it = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST);
        foreach ($it as $f) {
            $f->isDir() && !$f->isLink() ? @rmdir($f->getPathname()) : @unlink($f->getPathname());
        }
        @rmdir($dir);
    }
}
