<?php
// A worker for pool.boot: fork. Its boot draws from mt_rand() (so the zygote's generator
// has a state to copy), and may open a socket (FORK_TEST_CONNECT=host:port, declared
// to Fork::reopens() when FORK_TEST_REOPENS=1), as an app connecting at boot would.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Fork;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

$bootPid = getmypid();
mt_rand();
$socket = null;
if (($to = getenv('FORK_TEST_CONNECT')) !== false && $to !== '') {
    $socket = stream_socket_client("tcp://$to", $errno, $error, 5);
    if (getenv('FORK_TEST_REOPENS') === '1') {
        Fork::reopens($socket);
    }
}
$worker = HttpWorker::create();
// Code after create() is boot too: only run() is the fork point.
$late = getmypid();

$worker->run(static function (Request $r) use ($bootPid, $late): Response {
    static $first = null;
    static $kept = null;
    $first ??= mt_rand();
    switch ($r->path) {
        case '/who':
            return Response::json([
                'pid' => getmypid(), 'ppid' => posix_getppid(), 'boot' => $bootPid, 'late' => $late,
                'first_rand' => $first, 'warm' => class_exists('ForkTestLateClass', false),
            ]);
        case '/warm':
            // Code loaded lazily by a request: a refork's mold shares it with the workers it forks.
            if (!class_exists('ForkTestLateClass', false)) {
                eval('final class ForkTestLateClass {}');
            }
            return Response::json(['pid' => getmypid()]);
        case '/connect':
            // A connection kept between requests, as a client cached in a static would.
            static $held = null;
            $held ??= stream_socket_client('tcp://' . $r->query()['to'], $errno, $error, 5);
            return Response::json(['pid' => getmypid()]);
        case '/keep':
            $kept = $r->query()['v'] ?? null;
            return Response::json(['pid' => getmypid()]);
        case '/kept':
            return Response::json(['pid' => getmypid(), 'kept' => $kept]);
        case '/compile':
            // A file no process has loaded yet: once one worker compiled it, the others
            // find it in OPcache only when they share the zygote's.
            $file = (string) ($r->query()['file'] ?? '');
            require $file;
            return Response::json(['pid' => getmypid()]);
        case '/cached':
            $file = (string) ($r->query()['file'] ?? '');
            return Response::json(['pid' => getmypid(), 'cached' => opcache_is_script_cached($file)]);
        case '/log':
            error_log('fork-test line from ' . getmypid());
            return Response::json(['pid' => getmypid()]);
        case '/slow':
            usleep(20000);
            return Response::text('slow ' . getmypid());
    }
    return Response::text('hello ' . getmypid());
});
