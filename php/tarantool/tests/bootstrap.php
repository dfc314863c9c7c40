<?php

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Ferry\\Tarantool\\Tests\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

if (trim((string) shell_exec('command -v tarantool')) === '') {
    fwrite(STDERR, "The tests need the tarantool binary (2.6) on PATH.\n");
    exit(1);
}
