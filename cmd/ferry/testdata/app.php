<?php
// The application the end-to-end tests drive through `ferry serve`.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$counter = 0;
$worker = HttpWorker::create();
$worker->onReset(static function () use (&$counter): void { $counter = 0; });

$worker->run(static function (Request $r) use (&$counter): Response {
    $counter++;
    switch ($r->path) {
        case '/echo':
            $files = [];
            foreach ($r->files() as $field => $f) {
                $files[$field] = is_array($f['name'])
                    ? $f
                    : $f + ['content' => file_get_contents($f['tmp_name']), 'exists' => is_file($f['tmp_name'])];
            }
            return Response::json([
                'method' => $r->method, 'path' => $r->path, 'uri' => $r->uri, 'query' => (object)$r->query(),
                'post' => (object)$r->post(), 'files' => (object)$files, 'cookies' => (object)$r->cookies,
                'headers' => (object)$r->headers,
                'body' => $r->body, 'protocol' => $r->protocol, 'remote' => $r->remoteAddr, 'host' => $r->host,
                'scheme' => $r->scheme,
            ]);
        case '/headers':
            return Response::text("multi\n")
                ->addHeader('X-Multi', 'one')->addHeader('X-Multi', 'two')
                ->cookie('a', 'b c')->cookie('session', 'xyz', httpOnly: true)
                ->status(201);
        case '/print':
            echo "printed ";
            return Response::text('returned');
        case '/counter':
            return Response::text((string)$counter);
        case '/crash':
            exit(1);
        case '/sleep':
            usleep((int)($r->query()['ms'] ?? 0) * 1000);
            return Response::text('slept');
        case '/throw':
            throw new RuntimeException('secret detail');
        case '/opcache':
            $status = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
            $pre = function_exists('ferry_test_preloaded') ? ferry_test_preloaded() : 'not preloaded';
            return Response::text(($status !== false && $status['opcache_enabled'] ? 'opcache on' : 'opcache off') . ", $pre");
        case '/env':
            return Response::text((string)getenv((string)($r->query()['name'] ?? '')));
        case '/server-id':
            // What the request id reached PHP as, in the $_SERVER shape (HTTP_X_REQUEST_ID).
            return Response::text((string)($r->server()['HTTP_X_REQUEST_ID'] ?? '(none)'));
        case '/parts':
            // An answer in parts: the access log counts no bytes for it, as fasthttp declares no length.
            return Response::stream(['a', 'b', 'c'], 201, ['Content-Type' => 'text/plain']);
        case '/pid':
            return Response::text((string)getmypid());
        case '/grow':
            // Keeps ?mib= MiB of its own (private, written pages) for the
            // worker's life; answers its pid.
            static $kept = [];
            $kept[] = str_repeat('x', (int)($r->query()['mib'] ?? 0) << 20);
            return Response::text((string)getmypid());
        case '/hold':
            // Answers (its pid) once the test creates the file: a slow
            // request whose end the test decides. At most 30 s.
            $gate = (string)($r->query()['file'] ?? '');
            for ($i = 0; $gate !== '' && !file_exists($gate) && $i < 15000; $i++) { usleep(2000); clearstatcache(); }
            return Response::text((string)getmypid());
        case '/stdout':
            // What a "log to stdout" handler does: it must not reach the relay.
            fwrite(STDOUT, "<!DOCTYPE html><p>log line on stdout</p>\n");
            file_put_contents('php://stdout', "another line\n");
            return Response::text('wrote to stdout');
        case '/alloc':
            $keep = str_repeat('x', (int)($r->query()['mb'] ?? 0) << 20);
            return Response::text((string)strlen($keep));
        case '/big':
            return Response::text(str_repeat('x', (int)($r->query()['n'] ?? 0)));
        case '/file':
            // A copy, so that delete=1 removes only what the test made.
            $q = $r->query();
            $path = tempnam(sys_get_temp_dir(), 'ferry-e2e-');
            file_put_contents($path, 'abcdefghijklmnopqrstuvwxyz');
            $response = Response::file($path, 'text/plain', (int)($q['offset'] ?? 0), isset($q['length']) ? (int)$q['length'] : null, ($q['delete'] ?? '') === '1');
            return $response->header('X-Path', $path);
        case '/missing-file':
            $path = tempnam(sys_get_temp_dir(), 'ferry-e2e-');
            $response = Response::file($path);
            unlink($path); // gone before the server opens it
            return $response;
        case '/spool':
            $n = (int)($r->query()['kib'] ?? 0);
            $hang = (int)($r->query()['hang_ms'] ?? 0); // then outlive exec_ttl, the spool file written
            // X-Peak: the memory this request's output took at most. The peak is reset first: a
            // forked worker starts with its zygote's, which depends on when it was forked.
            memory_reset_peak_usage();
            $response = Response::fromOutput(static function () use ($n, $hang): void {
                for ($i = 0; $i < $n; $i++) {
                    echo str_pad((string)$i, 1023, '.'), "\n";
                }
                ob_flush();
                usleep($hang * 1000);
            }, 200, ['Content-Type' => 'text/plain']);
            return $response->header('X-Peak', (string)memory_get_peak_usage());
    }
    return Response::text('not found', 404);
});
