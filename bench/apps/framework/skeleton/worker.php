<?php

declare(strict_types=1);

// Ferry worker: boots the application once, then serves requests from the same objects.
require '{{SDK_AUTOLOAD}}';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$kernel = require __DIR__ . '/bootstrap.php';

HttpWorker::create()->run(static function (Request $request) use ($kernel): Response {
    $response = $kernel->handle(new Framework\Http\Request($request->method, $request->path, $request->query(), $request->cookies));

    return new Response($response->status, $response->headers, $response->body);
});
