<?php

declare(strict_types=1);

error_reporting(E_ALL);

require dirname(__DIR__) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Ferry\\Worker\\Tests\\', 19) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 19)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
