<?php
// For output_e2e_test.go: PHP's output buffering as an application written for FPM uses it.
// No hook, so ext/ferry's loop serves it unless FERRY_EXT_LOOP=0.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static function (Request $r): Response|string {
    switch ($r->path) {
        case '/download':
            // The first line of many download scripts and error handlers.
            echo 'a';
            while (ob_get_level()) {
                ob_end_clean();
            }
            echo 'b';

            return '';
        case '/state':
            // What a request starts with: FPM's one default buffer, empty.
            return Response::text(ob_get_level() . ' ' . var_export(ob_get_length(), true) . ' ' . implode(',', ob_list_handlers()));
        case '/get-clean':
            echo 'before';
            $before = ob_get_clean();
            echo "after;";

            return "[$before] level " . ob_get_level();
        case '/left-open':
            // Buffers the application leaves open are flushed into its answer, not the next one's.
            echo 'one;';
            ob_start();
            echo 'two;';

            return Response::text('returned');
        case '/stream':
            echo 'head;';
            while (ob_get_level()) {
                ob_end_clean();
            }

            return Response::stream((static function (): \Generator {
                yield 'part1;';
                echo 'echoed;';
                yield 'part2';
            })());
        default:
            return Response::text('hello');
    }
});
