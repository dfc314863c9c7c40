<?php

declare(strict_types=1);

// auto_prepend_file for one CLI run of an app's own public/index.php (the request is in
// REQUEST_URI): at shutdown it writes to $FERRY_BENCH_RECORD, as JSON, every class,
// interface, trait and enum the request declared from a file, with that file.
// bench/apps/symfony/preload.php then loads the same list at php-fpm's start.
// Used by the symfony and laravel scenarios (bench/scenarios/symfony.py, laravel.py).

$ferryBenchRecord = getenv('FERRY_BENCH_RECORD');
if (!is_string($ferryBenchRecord) || $ferryBenchRecord === '') {
    fwrite(STDERR, "record.php: FERRY_BENCH_RECORD (the JSON file to write) is not set\n");
    exit(2);
}

register_shutdown_function(static function () use ($ferryBenchRecord): void {
    $classes = [];
    foreach ([get_declared_interfaces(), get_declared_traits(), get_declared_classes()] as $names) {
        foreach ($names as $name) {
            $r = new ReflectionClass($name);
            // Internal classes need no preloading; anonymous ones cannot be named again;
            // an alias would be listed under its target's file a second time.
            if (!$r->isUserDefined() || $r->isAnonymous() || strcasecmp($r->getName(), $name) !== 0) {
                continue;
            }
            $classes[] = [$name, $r->getFileName()];
        }
    }
    // Interfaces and traits first, then classes in the class table's order (a child may
    // come before its parent): preload.php loads each through the autoloader, which
    // brings any missing parent in first.
    file_put_contents($ferryBenchRecord, json_encode([
        'uri' => $_SERVER['REQUEST_URI'] ?? null,
        'classes' => $classes,
        'files' => get_included_files(),
    ], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\n");
});
