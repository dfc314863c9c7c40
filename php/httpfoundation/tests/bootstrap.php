<?php

declare(strict_types=1);

error_reporting(E_ALL);

// Debian's HttpFoundation (and symfony/mime, which file responses guess types with), then
// Illuminate for the Laravel adapter's tests, as php/symfony's and php/laravel's test apps
// load them; then the packages from this checkout (each loads php/httpfoundation and
// php/worker).
require_once '/usr/share/php/Symfony/Component/HttpFoundation/autoload.php';
require_once '/usr/share/php/Symfony/Component/Mime/autoload.php';
require_once 'Illuminate/autoload.php';
require dirname(__DIR__) . '/autoload.php';
require dirname(__DIR__, 2) . '/symfony/autoload.php';
require dirname(__DIR__, 2) . '/laravel/autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Ferry\\HttpFoundation\\Tests\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
