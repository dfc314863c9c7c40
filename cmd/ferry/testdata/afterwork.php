<?php
// For afterwork_e2e_test.go: a terminate hook that runs after /slow's answer until the
// test creates the file named by its ?until=, as a framework's kernel.terminate would
// send mail or flush logs after the response.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$until = null;
$http = HttpWorker::create();
$http->worker()->onTerminate(static function () use (&$until): void {
    if ($until === null) {
        return;
    }
    $file = $until;
    $until = null;
    $deadline = microtime(true) + 10;
    while (!file_exists($file) && microtime(true) < $deadline) {
        usleep(2000);
    }
});
$http->run(static function (Request $r) use (&$until): Response|string {
    if ($r->path === '/echo') {
        // An echoed page of ?mb= MiB: answered from the output, with a hook to follow.
        while (ob_get_level()) {
            ob_end_clean();
        }
        $mib = str_repeat('x', 1 << 20);
        for ($i = (int) ($r->query()['mb'] ?? 0); $i > 0; $i--) {
            echo $mib;
        }

        return '';
    }
    if ($r->path === '/slow') {
        $until = (string) ($r->query()['until'] ?? '');
    }

    return Response::text((string) getmypid());
});
