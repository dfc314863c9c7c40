<?php

declare(strict_types=1);

// Lets scripts use the SDK with a plain require, since Composer is not available at run time.
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Ferry\\Worker\\', 13) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 13)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
