<?php
// Writes down every request it is given (method, uri, host as JSON, one a
// line, to $FERRY_SEEN_LOG), so that a test can tell which requests reached PHP.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$log = (string)getenv('FERRY_SEEN_LOG');
HttpWorker::create()->run(static function (Request $r) use ($log): Response {
    $line = json_encode([$r->method, $r->uri, $r->host, $r->path], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE);
    file_put_contents($log, $line . "\n", FILE_APPEND | LOCK_EX);
    return Response::text('seen');
});
