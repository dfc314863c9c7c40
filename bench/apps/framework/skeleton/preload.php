<?php

declare(strict_types=1);

// opcache.preload: every class of the application linked once at FPM start, so a request
// pays for boot logic but not for loading and linking class files.
require_once __DIR__ . '/src/Framework/Autoloader.php';

(new Framework\Autoloader(['Framework\\' => __DIR__ . '/src/Framework/', 'App\\' => __DIR__ . '/src/App/']))->register();

$src = __DIR__ . '/src/';
$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    $class = str_replace('/', '\\', substr($file->getPathname(), \strlen($src), -4));
    class_exists($class) || interface_exists($class);
}
foreach (glob(__DIR__ . '/templates/*.php') as $template) {
    opcache_compile_file($template);
}
