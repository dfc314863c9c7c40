<?php

declare(strict_types=1);

// Shared by both entry points: autoloader, then the whole application boot.
// With opcache.preload the class already exists and its file must not be declared again.
if (!class_exists(Framework\Autoloader::class, false)) {
    require __DIR__ . '/src/Framework/Autoloader.php';
}

(new Framework\Autoloader(['Framework\\' => __DIR__ . '/src/Framework/', 'App\\' => __DIR__ . '/src/App/']))->register();

return Framework\Application::boot(__DIR__);
