<?php

declare(strict_types=1);

// Direct mode with pool.fibers, for direct_fibers_e2e_test.go. Requests wait on the event
// loop for what other requests do (a name marked, a name released), so a test can tell
// two requests run at once on one worker from events alone: /meet?me=A&peer=B answers
// only once B has started, which one request at a time never lets happen.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Loop;

/** @var array<string, true> $marks */
$marks = [];

// Waits on the loop until $name is marked (false after 10s, for a test to fail, not hang).
$until = static function (string $name) use (&$marks): bool {
    for ($i = 0; $i < 1000 && !isset($marks[$name]); $i++) {
        Loop::sleep(0.01);
    }

    return isset($marks[$name]);
};

// /upload's terminate hook holds its Fiber (after the answer) until the test releases it.
$after = null;
$http = HttpWorker::create(fibers: true);
$http->worker()->onTerminate(static function () use (&$after, $until): void {
    $name = $after;
    $after = null;
    if ($name !== null) {
        $until("release $name");
    }
});
$http->run(static function (Request $request) use (&$marks, &$after, $until): Response {
    $q = $request->query();
    $name = (string) ($q['name'] ?? '');
    switch ($request->path) {
        case '/meet':
            $me = (string) $q['me'];
            $peer = (string) $q['peer'];
            $marks["started $me"] = true;
            fwrite(STDERR, "meet: $me started\n");

            return Response::text($until("started $peer") ? "$me met $peer" : "$me never met $peer");
        case '/hold':
            fwrite(STDERR, "holding $name\n");
            $released = $until("release $name");
            fwrite(STDERR, "held $name: " . ($released ? 'released' : 'timed out') . "\n");

            return Response::text($released ? "$name released" : "$name timed out");
        case '/sleep':
            fwrite(STDERR, "sleeping $name\n");
            Loop::sleep(((int) ($q['ms'] ?? 1)) / 1000);
            fwrite(STDERR, "slept $name\n");

            return Response::text("$name slept");
        case '/upload':
            $after = $name;

            $file = (string) ($request->files()['doc']['tmp_name'] ?? '');

            return Response::text(is_file($file) ? $file : "no upload: $file");
        case '/exit':
            exit(3);
        case '/release':
            $marks["release $name"] = true;

            return Response::text("released $name");
        case '/stream':
            return Response::stream((static function () use ($name, $until): \Generator {
                fwrite(STDERR, "streaming $name\n");
                yield "first part\n";
                $until("release $name");
                yield "second part\n";
                fwrite(STDERR, "streamed $name\n");
            })());
        default:
            return Response::text('pid ' . getmypid() . ' ' . $request->path . ' ' . ($q['n'] ?? ''));
    }
});
