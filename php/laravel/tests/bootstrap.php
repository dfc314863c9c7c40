<?php

declare(strict_types=1);

error_reporting(E_ALL);

// Debian's php-laravel-framework and the test app's App\ classes, then this package.
require __DIR__ . '/app/vendor/autoload.php';
require dirname(__DIR__) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Ferry\\Laravel\\Tests\\', 20) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 20)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
