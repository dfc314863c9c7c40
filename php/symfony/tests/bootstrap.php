<?php

declare(strict_types=1);

error_reporting(E_ALL);

// The test app's autoloader: Debian's Symfony 5.4, this package and php/worker, App\.
require dirname(__DIR__) . '/tests/app/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Ferry\\Symfony\\Tests\\', 20) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 20)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
