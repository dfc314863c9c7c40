<?php

declare(strict_types=1);

// For inputs_e2e_test.go: what PHP's request parsing made of the request, as the worker
// received it, to compare byte for byte with PHP's own (php -S running inputs_php.php).
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;

HttpWorker::create()->run(static function (Request $r): string {
    // With ext/ferry, $_COOKIE is what the extension's loop (or HttpWorker) set.
    return serialize([
        'cookie' => $r->cookies,
        'superglobal' => extension_loaded('ferry') ? $_COOKIE : $r->cookies,
        'get' => $r->query(),
        'post' => $r->post(),
        'http_cookie' => $r->server()['HTTP_COOKIE'] ?? null,
    ]);
});
