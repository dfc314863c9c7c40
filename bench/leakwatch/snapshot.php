<?php

declare(strict_types=1);

// What one leak watch check costs, part by part, in a process shaped like a booted app:
// php bench/leakwatch/snapshot.php [classes=300] [rounds=2000]
// Each part is timed over many rounds (hrtime, median of 5 batches), so the figures are
// per call; a check runs after 2 of every pool.leak_watch_every requests.
require __DIR__ . '/../../php/worker/autoload.php';

use Ferry\Worker\Internal\Leak\LeakSnapshot;
use Ferry\Worker\Internal\Leak\LeakStatics;

$classes = (int) ($argv[1] ?? 300);
$rounds = (int) ($argv[2] ?? 2000);
// A framework's worth of user classes, a few with statics, and some globals.
for ($i = 0; $i < $classes; $i++) {
    eval("namespace App\\M$i; final class Service$i { public static array \$cache = []; private \$x = $i; public function f$i() { return $i; } }"
        . "function helper$i() { return $i; }");
}
$GLOBALS['config'] = array_fill(0, 50, 'value');
$GLOBALS['app'] = new ArrayObject(range(1, 100));
$statics = new LeakStatics();
iterator_to_array($statics->read());

$parts = [
    'gc_collect_cycles' => static fn () => gc_collect_cycles(),
    'memory_get_usage' => static fn () => memory_get_usage(),
    'process settings (tz, locale, cwd, umask, ob)' => static fn () => [date_default_timezone_get(), setlocale(LC_ALL, 0), getcwd(), umask(), ob_get_level()],
    'handlers' => static function () {
        set_error_handler(null);
        restore_error_handler();
        set_exception_handler(null);
        restore_exception_handler();
    },
    'ini_get_all(null, false)' => static fn () => ini_get_all(null, false),
    'scandir(/proc/self/fd)' => static fn () => scandir('/proc/self/fd'),
    'get_defined_functions()' => static fn () => get_defined_functions(),
    'get_declared_classes()' => static fn () => get_declared_classes(),
    'get_included_files()' => static fn () => get_included_files(),
    'statics read' => static fn () => iterator_to_array($statics->read()),
    'LeakSnapshot::take (functions too)' => static fn () => LeakSnapshot::take($statics, [], true),
    'LeakSnapshot::take' => static fn () => LeakSnapshot::take($statics, [], false),
];
printf("%d user classes and functions, PHP %s\n", $classes, PHP_VERSION);
foreach ($parts as $name => $fn) {
    $batches = [];
    for ($b = 0; $b < 5; $b++) {
        $n = max(1, intdiv($rounds, str_contains($name, 'functions') ? 10 : 1));
        $t = hrtime(true);
        for ($i = 0; $i < $n; $i++) {
            $fn();
        }
        $batches[] = (hrtime(true) - $t) / $n / 1000;
    }
    sort($batches);
    printf("%-45s %8.2f us (%.2f .. %.2f)\n", $name, $batches[2], $batches[0], $batches[4]);
}
