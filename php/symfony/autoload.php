<?php

declare(strict_types=1);

// Lets the package be used straight from a checkout, without `composer install`.
// The HttpFoundation bridge and the worker SDK live next door in php/httpfoundation and
// php/worker (its autoload.php loads the SDK's); a Composer install provides them instead.
// Symfony itself comes from the application's autoloader (Composer's, or Debian's
// /usr/share/php/Symfony/.../autoload.php files).
if (is_file(__DIR__ . '/../httpfoundation/autoload.php')) {
    require_once __DIR__ . '/../httpfoundation/autoload.php';
}

spl_autoload_register(static function (string $class): void {
    $prefix = 'Ferry\\Symfony\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
