<?php
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Psr7\Psr7Worker;
use Psr\Http\Message\ServerRequestInterface;

Psr7Worker::create()->run(static function (ServerRequestInterface $req) {
    $f = new Nyholm\Psr7\Factory\Psr17Factory();
    if ($req->getUri()->getPath() === '/pipe') {
        // A body of unknown size (a pipe): the bridge streams it as it is read.
        $n = (int)($req->getQueryParams()['bytes'] ?? 0);
        $pipe = popen('head -c ' . $n . ' /dev/zero', 'r');
        return $f->createResponse(200)->withHeader('Content-Type', 'application/octet-stream')->withBody($f->createStreamFromResource($pipe));
    }
    if ($req->getUri()->getPath() === '/sleep') {
        usleep(1000 * (int)($req->getQueryParams()['ms'] ?? 0));
    }
    $out = [
        'method' => $req->getMethod(),
        'path' => $req->getUri()->getPath(),
        'query' => $req->getQueryParams(),
        'parsed' => $req->getParsedBody(),
        'cookies' => $req->getCookieParams(),
        'files' => array_map(fn ($u) => ['name' => $u->getClientFilename(), 'content' => (string)$u->getStream()], $req->getUploadedFiles()),
        'header' => $req->getHeaderLine('X-Test'),
        'body' => (string)$req->getBody(),
    ];
    return $f->createResponse(202)
        ->withHeader('Content-Type', 'application/json')
        ->withAddedHeader('X-Multi', 'a')->withAddedHeader('X-Multi', 'b')
        ->withBody($f->createStream(json_encode($out)));
});
