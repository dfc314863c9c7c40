<?php

declare(strict_types=1);

// pool.fiber_io with HTTP clients (TestFiberIOHTTP*): file_get_contents('http://...') and a
// raw HTTP/1.0 client on stream_socket_client(), both the plain blocking way.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    $addr = $q['addr'] ?? '';
    $path = $q['path'] ?? '/';
    if ($request->path === '/hello') {
        return Response::text('hello');
    }
    if ($request->path === '/fgc') {
        $opts = isset($q['to']) ? ['http' => ['timeout' => (float) $q['to']]] : [];
        $body = @file_get_contents("http://$addr$path", false, stream_context_create($opts));

        return Response::text($body === false ? 'error: ' . (error_get_last()['message'] ?? '?') : $body);
    }
    if ($request->path === '/raw') {
        // With dst, only default_socket_timeout bounds the read (no stream_set_timeout()):
        // PHP gives it to the stream when it is made.
        $old = isset($q['dst']) ? ini_set('default_socket_timeout', $q['dst']) : false;
        $c = @stream_socket_client("tcp://$addr", $errno, $errstr, 2);
        if ($old !== false) {
            ini_set('default_socket_timeout', $old);
        }
        if ($c === false) {
            return Response::text("error: connect: $errno $errstr");
        }
        if (isset($q['to'])) {
            stream_set_timeout($c, 0, (int) ((float) $q['to'] * 1e6));
        }
        fwrite($c, "GET $path HTTP/1.0\r\nHost: test\r\n\r\n");
        $answer = stream_get_contents($c);
        $meta = stream_get_meta_data($c);
        fclose($c);
        if ($meta['timed_out']) {
            return Response::text('error: timed out');
        }
        [$head, $body] = explode("\r\n\r\n", (string) $answer, 2) + ['', ''];

        return Response::text($head === '' ? 'error: no answer' : strtok($head, "\r\n") . ' | ' . $body);
    }

    return Response::text('not found', 404);
});
