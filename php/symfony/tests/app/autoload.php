<?php

declare(strict_types=1);

// Stands in for vendor/autoload.php: without Composer, Symfony comes from Debian's
// packages (php-symfony-framework-bundle, php-symfony-runtime) under /usr/share/php, and
// ferry/symfony-runtime from this checkout. With Composer, none of this file exists.
require_once '/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php';
require_once '/usr/share/php/Symfony/Component/Runtime/autoload.php';
require_once dirname(__DIR__, 2) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
