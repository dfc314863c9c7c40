<?php
// For phprules_e2e_test.go: PHP's own rules as a worker applies them between requests
// (ini defaults, superglobals, fatal errors). No hook, so ext/ferry's loop serves it.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static function (Request $r): Response {
    switch ($r->path) {
        case '/ini':
            return Response::text((string) ini_get((string) ($r->query()['name'] ?? '')));
        case '/leak':
            $_SERVER['X_LEAK'] = 'a';
            $_GET['leak'] = $_POST['leak'] = $_COOKIE['leak'] = $_REQUEST['leak'] = 1;
            $_FILES['leak'] = ['name' => 'x'];

            return Response::text('written');
        case '/leaked':
            // $_COOKIE is the request's own with ext/ferry, [] without.
            $seen = [$_SERVER['X_LEAK'] ?? null, $_GET, $_POST, $_COOKIE['leak'] ?? null, $_FILES, $_REQUEST];

            return Response::text(json_encode($seen) . (extension_loaded('ferry') ? ' ext' : ' php'));
        case '/alloc':
            // Past the default memory_limit: PHP's fatal "Allowed memory size exhausted".
            $keep = str_repeat('x', (int) ($r->query()['mb'] ?? 0) << 20);

            return Response::text((string) strlen($keep));
        case '/stream-alloc':
            // The head and a part are out when the fatal error comes.
            return Response::stream((static function () use ($r): \Generator {
                yield "first part\n";
                yield str_repeat('x', (int) ($r->query()['mb'] ?? 0) << 20);
            })());
        case '/exit':
            exit(1);
        case '/wait':
            // Fiber mode: suspended here while another request of this worker dies.
            fwrite(STDERR, "suspended in /wait\n");
            \Ferry\Worker\Loop::get()->wait((float) ($r->query()['s'] ?? 0));

            return Response::text('waited');
        case '/pid':
            return Response::text((string) getmypid());
    }

    return Response::text('not found', 404);
});
