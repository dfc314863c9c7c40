<?php

declare(strict_types=1);

require __DIR__ . '/../autoload.php';
// Only the tests load php/worker (ForkTest checks what Connection declares to its
// fork-server); the package itself merely looks whether Ferry\Worker\Fork exists.
if (is_file(__DIR__ . '/../../worker/autoload.php')) {
    require_once __DIR__ . '/../../worker/autoload.php';
}

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
