<?php

declare(strict_types=1);

namespace Ferry\Laravel;

/**
 * The application's own classes when it has no vendor/autoload.php (an app run on
 * Debian's php-laravel-framework, or one whose `composer install` has not run): the
 * PSR-4 map of its composer.json, else Laravel's `App\` => `app/`. Without this,
 * bootstrap/app.php binds `App\Http\Kernel` and boot dies on "Target class does not exist".
 */
final class AppAutoloader
{
    public const DEFAULT_MAP = ['App\\' => ['app/']];

    /**
     * Registers the map and returns it (prefix => absolute directories).
     *
     * @return array<string, list<string>>
     * @throws \RuntimeException when composer.json cannot be read as Composer would
     */
    public static function register(string $basePath): array
    {
        $map = self::map($basePath);
        // Longest prefix first, as Composer does, so App\Models\ wins over App\.
        uksort($map, static fn (string $a, string $b): int => \strlen($b) <=> \strlen($a));
        spl_autoload_register(static function (string $class) use ($map): void {
            foreach ($map as $prefix => $dirs) {
                if ($prefix !== '' && strncmp($class, $prefix, \strlen($prefix)) !== 0) {
                    continue;
                }
                $relative = str_replace('\\', '/', substr($class, \strlen($prefix))) . '.php';
                foreach ($dirs as $dir) {
                    if (is_file($dir . '/' . $relative)) {
                        require $dir . '/' . $relative;

                        return;
                    }
                }
            }
        });

        return $map;
    }

    /**
     * @return array<string, list<string>>
     */
    public static function map(string $basePath): array
    {
        $file = $basePath . '/composer.json';
        $psr4 = self::DEFAULT_MAP;
        if (is_file($file)) {
            $json = json_decode((string) @file_get_contents($file), true);
            if (!\is_array($json)) {
                throw new \RuntimeException("$file is not valid JSON (" . json_last_error_msg() . '): fix it, or run `composer dump-autoload` and use vendor/autoload.php');
            }
            $declared = $json['autoload']['psr-4'] ?? null;
            if ($declared !== null && !\is_array($declared)) {
                throw new \RuntimeException("$file: autoload.psr-4 must be an object such as {\"App\\\\\": \"app/\"}");
            }
            // A composer.json without a PSR-4 map still has Laravel's app/ layout.
            $psr4 = $declared ?: self::DEFAULT_MAP;
        }
        $map = [];
        foreach ($psr4 as $prefix => $dirs) {
            foreach ((array) $dirs as $dir) {
                if (!\is_string($dir)) {
                    throw new \RuntimeException("$file: autoload.psr-4 \"$prefix\" must name directories as strings");
                }
                $map[(string) $prefix][] = rtrim($basePath . '/' . $dir, '/');
            }
        }

        return $map;
    }
}
