<?php
// A worker that answers with whatever response context the request names, as
// a buggy or hostile app could: the server must not trust it.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

$answers = [
    '/crlf' => '{"status":200,"headers":{"X-A":["ok\r\nSet-Cookie: evil=1"]}}',
    '/nul' => '{"status":200,"headers":{"X-A":["a\u0000b"]}}',
    '/103' => '{"status":103}',
    '/ok' => '{"status":200,"headers":{"X-A":["fine"]}}',
];
Worker::create()->run(static function (Payload $p) use ($answers): Payload {
    $path = unserialize($p->context, ['allowed_classes' => false])['path'] ?? '';

    return new Payload('body', $answers[$path] ?? '{"status":404}');
});
