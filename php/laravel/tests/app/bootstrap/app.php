<?php

declare(strict_types=1);

// The standard Laravel 8 bootstrap file, plus APP_STORAGE: tests and benchmarks point
// storage (sessions, compiled views, uploads) at a private directory.
$app = new Illuminate\Foundation\Application($_ENV['APP_BASE_PATH'] ?? dirname(__DIR__));

$storage = $_SERVER['APP_STORAGE'] ?? $_ENV['APP_STORAGE'] ?? getenv('APP_STORAGE');
if (is_string($storage) && $storage !== '') {
    $app->useStoragePath($storage);
}
foreach (['app/public', 'framework/sessions', 'framework/views', 'framework/cache', 'logs'] as $dir) {
    if (!is_dir($app->storagePath() . '/' . $dir)) {
        @mkdir($app->storagePath() . '/' . $dir, 0o777, true);
    }
}

$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Console\Kernel::class, Illuminate\Foundation\Console\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);

return $app;
