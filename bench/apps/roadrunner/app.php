<?php

declare(strict_types=1);

// The app both workers of the roadrunner scenario run: a PSR-7 hello world on
// Debian's Nyholm factories. The RoadRunner one gets its ServerRequest from
// RoadRunner's protocol (cmd/ferry/testdata/rr_worker.php, as PSR7Worker
// builds it), the Ferry one from php/worker's Psr7Worker.

require_once '/usr/share/php/Nyholm/Psr7/autoload.php';

use Nyholm\Psr7\Factory\Psr17Factory;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;

return static function (ServerRequestInterface $req): ResponseInterface {
    static $f = new Psr17Factory();
    return $f->createResponse(200)
        ->withHeader('Content-Type', 'text/plain')
        ->withBody($f->createStream("Hello, world\n"));
};
