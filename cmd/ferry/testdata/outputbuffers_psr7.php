<?php
// For output_e2e_test.go: the download-script line in a PSR-7 handler.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Psr7\Psr7Worker;
use Psr\Http\Message\ServerRequestInterface;

Psr7Worker::create()->run(static function (ServerRequestInterface $req) {
    $f = new Nyholm\Psr7\Factory\Psr17Factory();
    if ($req->getUri()->getPath() === '/state') {
        return $f->createResponse(200)->withBody($f->createStream((string) ob_get_level()));
    }
    echo 'a';
    while (ob_get_level()) {
        ob_end_clean();
    }
    echo 'b';

    return $f->createResponse(200)->withBody($f->createStream(';returned'));
});
