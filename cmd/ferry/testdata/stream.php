<?php

declare(strict_types=1);

// Streamed answers for stream_e2e_test.go. STREAM_TEST_DIR is where the worker notes
// what happened to a stream (the test waits for those files).
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\StreamStoppedException;
use Ferry\Worker\Loop;

$dir = (string) getenv('STREAM_TEST_DIR');

HttpWorker::create()->run(static function (Request $r) use ($dir): Response|string {
    $q = $r->query();
    switch ($r->path) {
        case '/pid':
            return (string) getmypid();
        case '/endless':
            // One event every 10 ms until the client leaves.
            $tag = (string) ($q['tag'] ?? '');
            $block = isset($q['block']);
            $events = static function () use ($dir, $tag, $block): Generator {
                $i = 0;
                try {
                    while (true) {
                        yield 'data: ' . ++$i . "\n\n";
                        // Through the loop: in Fiber mode the worker reads the STOP meanwhile.
                        // With `block`, as examples/sse does: in Fiber mode the worker
                        // reads only between the parts then.
                        $block ? usleep(10_000) : Loop::sleep(0.01);
                    }
                } catch (StreamStoppedException) {
                    file_put_contents("$dir/stopped$tag", (string) $i);
                }
            };
            return Response::stream($events(), 200, ['Content-Type' => 'text/event-stream']);
        case '/busy':
            // Runs `s` seconds without a look at the relay: a slow report, a long query.
            $until = microtime(true) + (float) ($q['s'] ?? 30);
            while (microtime(true) < $until) {
                usleep(10_000);
            }
            return (string) getmypid();
        case '/gate':
            // The second part waits until the test, having read the first, opens the gate.
            $parts = static function () use ($dir): Generator {
                yield "first\n";
                while (!file_exists("$dir/gate")) {
                    Loop::sleep(0.002);
                    clearstatcache();
                }
                yield "second\n";
            };
            return Response::stream($parts(), 200, ['Content-Type' => 'text/plain']);
        case '/large':
            // `mb` MiB in 1 MiB parts: the same string each time, so PHP holds one.
            $mb = (int) ($q['mb'] ?? 1);
            $block = str_repeat('x', 1 << 20);
            $parts = static function () use ($mb, $block): Generator {
                for ($i = 0; $i < $mb; $i++) {
                    yield $block;
                }
            };
            return Response::stream($parts(), 200, ['Content-Type' => 'application/octet-stream', 'X-Peak' => (string) memory_get_peak_usage()]);
        case '/hints':
            Response::earlyHints(['Link' => ['</style.css>; rel=preload; as=style', '</app.js>; rel=preload; as=script']]);
            // The final answer waits until the test has seen the 103.
            while (($q['gate'] ?? '') === '1' && !file_exists("$dir/gate")) {
                usleep(2_000);
            }
            return Response::text('hinted');
        case '/hints-stream':
            Response::earlyHints(['Link' => '</style.css>; rel=preload; as=style']);
            return Response::stream(['a', 'b', 'c'], 201, ['Content-Type' => 'text/plain']);
        case '/echo-then-stream':
            echo 'echoed;';
            return Response::stream((static function (): Generator {
                yield 'one;';
                echo 'printed;';
                yield 'two;';
            })(), 200, ['Content-Type' => 'text/plain']);
        case '/fail-midway':
            return Response::stream((static function (): Generator {
                yield "partial\n";
                throw new RuntimeException('the generator failed');
            })(), 200, ['Content-Type' => 'text/plain']);
        case '/empty-stream':
            return Response::stream([], 204);
    }
    return Response::text('not found', 404);
});
