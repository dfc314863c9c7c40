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
        case '/pid':
            return Response::text((string) getmypid());
    }

    return Response::text('not found', 404);
});
