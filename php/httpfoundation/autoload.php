<?php

declare(strict_types=1);

// Lets the package be used straight from a checkout, without `composer install`.
// The worker SDK lives next door in php/worker; a Composer install provides it instead.
// Symfony's HttpFoundation comes from the application's autoloader (Composer's, or
// Debian's /usr/share/php/Symfony/Component/HttpFoundation/autoload.php).
if (is_file(__DIR__ . '/../worker/autoload.php')) {
    require_once __DIR__ . '/../worker/autoload.php';
}

spl_autoload_register(static function (string $class): void {
    $prefix = 'Ferry\\HttpFoundation\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
