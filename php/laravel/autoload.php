<?php

declare(strict_types=1);

// Lets bin/ferry-laravel and the tests run from a checkout without Composer: Ferry\Laravel\
// from src/, and the HttpFoundation bridge and worker SDK from the sibling packages when
// Composer did not load them.
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Ferry\\Laravel\\', 14) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 14)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

if (!class_exists(Ferry\HttpFoundation\Bridge::class) && is_file(dirname(__DIR__) . '/httpfoundation/autoload.php')) {
    require_once dirname(__DIR__) . '/httpfoundation/autoload.php';
}
if (!class_exists(Ferry\Worker\Worker::class) && is_file(dirname(__DIR__) . '/worker/autoload.php')) {
    require dirname(__DIR__) . '/worker/autoload.php';
}
