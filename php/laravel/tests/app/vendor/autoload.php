<?php

declare(strict_types=1);

// Stands in for Composer's vendor/autoload.php: this app runs on Debian's
// php-laravel-framework, so the framework comes from /usr/share/php and App\ from app/.
require_once 'Illuminate/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'App\\', 4) !== 0) {
        return;
    }
    $file = dirname(__DIR__) . '/app/' . str_replace('\\', '/', substr($class, 4)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
