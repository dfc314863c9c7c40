<?php

declare(strict_types=1);

// The same worker through the PSR-7 bridge (Nyholm objects, PSR-15 style handler).
require __DIR__ . '/../../php/worker/autoload.php';

use Ferry\Worker\Psr7\Psr7Worker;
use Nyholm\Psr7\Response;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;

Psr7Worker::create()->run(
    static fn (ServerRequestInterface $request): ResponseInterface =>
        new Response(200, ['Content-Type' => 'text/plain; charset=utf-8'], "Hello, world\n")
);
