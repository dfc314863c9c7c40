<?php

declare(strict_types=1);

namespace Framework;

/**
 * PSR-4 autoloader: namespace prefix => directory. Loaded by hand in bootstrap.php.
 */
final class Autoloader
{
    /** @param array<string, string> $prefixes */
    public function __construct(private readonly array $prefixes)
    {
    }

    public function register(): void
    {
        spl_autoload_register($this->load(...));
    }

    public function load(string $class): void
    {
        foreach ($this->prefixes as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                $file = $dir . str_replace('\\', '/', substr($class, \strlen($prefix))) . '.php';
                if (is_file($file)) {
                    require $file;
                }

                return;
            }
        }
    }
}
