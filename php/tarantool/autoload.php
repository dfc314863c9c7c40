<?php

declare(strict_types=1);

// Lets the package be used straight from a checkout, without `composer install`.
// The codec lives next door in php/msgpack; a Composer install provides it instead.
if (is_file(__DIR__ . '/../msgpack/autoload.php')) {
    require_once __DIR__ . '/../msgpack/autoload.php';
}

spl_autoload_register(static function (string $class): void {
    $prefix = 'Ferry\\Tarantool\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
