<?php

declare(strict_types=1);

// Loads the voting app (namespace Voting\) and the Tarantool connector straight from the
// checkout; no Composer needed. The Ferry worker SDK is loaded by worker.php only.
require_once __DIR__ . '/../../php/tarantool/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Voting\\', 7) === 0) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 7)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
