<?php

declare(strict_types=1);

// opcache.preload script of the "+ preload" php-fpm systems in the symfony and laravel
// scenarios. Symfony 5.4 writes var/cache/prod/<Kernel>Container.preload.php only when a
// Composer ClassLoader is registered (PhpDumper::getAutoloadFile()); with Debian's
// autoloaders it writes none, and Laravel has no preload file at all. This loads what such
// a file would: the classes one request of the app declares (recorded by record.php), with
// the app's own autoloader, linked once at php-fpm's start and shared by every child.
//
// $FERRY_BENCH_PRELOAD names a JSON file: {"autoload": [files to require first],
// "classes": [[name, file], ...]} (record.php's output plus the autoloader). The outcome
// goes to php-fpm's log: how many were preloaded, and any that could not be.

$ferryBenchList = getenv('FERRY_BENCH_PRELOAD');
if (!is_string($ferryBenchList) || !is_file($ferryBenchList)) {
    throw new RuntimeException('preload.php: FERRY_BENCH_PRELOAD does not name a file: ' . var_export($ferryBenchList, true));
}
(static function (string $listFile): void {
    $list = json_decode((string) file_get_contents($listFile), true, 512, JSON_THROW_ON_ERROR);
    foreach ($list['autoload'] as $file) {
        require_once $file;
    }
    $declared = static fn (string $n, bool $autoload): bool => class_exists($n, $autoload)
        || interface_exists($n, $autoload) || trait_exists($n, $autoload) || enum_exists($n, $autoload);
    $loaded = 0;
    $failed = [];
    foreach ($list['classes'] as [$name, $file]) {
        if ($declared($name, false)) {
            ++$loaded;
            continue;
        }
        try {
            // Through the autoloader first, as a request would load it; the container's
            // generated classes in the cache directory have none, so their file is required.
            if (!$declared($name, true) && is_file($file)) {
                require_once $file;
            }
            if ($declared($name, false)) {
                ++$loaded;
            } else {
                $failed[] = "$name (not declared by $file)";
            }
        } catch (Throwable $e) {
            $failed[] = "$name: " . $e->getMessage();
        }
    }
    error_log(sprintf('preload.php: %d of %d recorded classes preloaded%s', $loaded, count($list['classes']),
        $failed ? '; not preloaded: ' . implode('; ', array_slice($failed, 0, 20)) : ''));
})($ferryBenchList);
