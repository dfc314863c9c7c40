<?php
// For proxy_e2e_test.go: what PHP's $_SERVER says of the client (after trusted
// proxies) and of the forwarding headers, and whether ext/ferry decoded the job.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static function (Request $r): Response {
    $out = ['ext' => extension_loaded('ferry') ? 'loaded' : 'none'];
    foreach ($r->server() as $key => $value) {
        if (in_array($key, ['REMOTE_ADDR', 'HTTPS', 'HTTP_HOST'], true)
            || str_starts_with($key, 'HTTP_X_FORWARDED') || $key === 'HTTP_FORWARDED') {
            $out[$key] = $value;
        }
    }

    return Response::json($out);
});
