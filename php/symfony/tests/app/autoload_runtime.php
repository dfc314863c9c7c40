<?php

declare(strict_types=1);

// Stands in for the vendor/autoload_runtime.php that symfony/runtime's Composer plugin
// generates, with this app's composer.json (extra.runtime.class) filled in. It does what
// the generated file does: the front controller requires it, it requires the front
// controller back to get the application closure, then the runtime resolves the
// closure's arguments, builds the application and runs it.

if (true === (require_once __DIR__ . '/autoload.php') || empty($_SERVER['SCRIPT_FILENAME'])) {
    return;
}

$app = require $_SERVER['SCRIPT_FILENAME'];

if (!is_object($app)) {
    throw new TypeError(sprintf('Invalid return value: callable object expected, "%s" returned from "%s".', get_debug_type($app), $_SERVER['SCRIPT_FILENAME']));
}

$runtime = $_SERVER['APP_RUNTIME'] ?? $_ENV['APP_RUNTIME'] ?? 'Ferry\\Symfony\\Runtime';
$runtime = new $runtime(($_SERVER['APP_RUNTIME_OPTIONS'] ?? $_ENV['APP_RUNTIME_OPTIONS'] ?? []) + ['project_dir' => __DIR__]);

[$app, $args] = $runtime
    ->getResolver($app)
    ->resolve();

$app = $app(...$args);

exit(
    $runtime
        ->getRunner($app)
        ->run()
);
