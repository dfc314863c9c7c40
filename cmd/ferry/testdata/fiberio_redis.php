<?php

declare(strict_types=1);

// pool.fiber_io with Redis (TestFiberIORedis): phpredis and predis, unmodified and used the
// plain blocking way. Both open tcp:// through PHP's transport and read through the stream,
// so with the hooks on a BLPOP suspends only its request's Fiber.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    $port = (int) ($q['port'] ?? 0);
    $key = 'k' . preg_replace('/[^a-z0-9]/', '', $q['key'] ?? 'x');
    $via = $q['c'] ?? 'phpredis';
    try {
        switch ($request->path) {
            case '/hello':
                return Response::text('hello');
            case '/blpop':
                // t: BLPOP's own timeout; rt: the client's read timeout.
                $r = redisClient($via, $port, (float) ($q['rt'] ?? 10));
                $got = blpop($via, $r, $key, (string) (float) ($q['t'] ?? 5));

                return Response::text($got ?? 'timeout');
            case '/blocked':
                $r = redisClient('phpredis', $port, 5);
                preg_match('/blocked_clients:(\d+)/', (string) $r->rawCommand('INFO', 'clients'), $m);

                return Response::text($m[1] ?? '?');
            case '/push':
                $r = redisClient('phpredis', $port, 5);
                for ($i = 0; $i < (int) ($q['n'] ?? 1); $i++) {
                    $r->rPush($key, "v$i");
                }

                return Response::text('pushed');
            case '/wrongtype':
                $r = redisClient($via, $port, 5);
                $r->set($key, 'a string');
                $ok = $r->lPush($key, 'x');

                return Response::text($ok === false ? 'error: ' . $r->getLastError() : 'no error');
            case '/shared':
                // One connection for every request of the worker, as an app keeping its
                // client in a static or a container does.
                static $shared = [];
                $shared[$via] ??= redisClient($via, $port, 10);
                $got = blpop($via, $shared[$via], $key, (string) (float) ($q['t'] ?? 5));

                return Response::text($got === false ? 'failed' : ($got ?? 'timeout'));
        }
    } catch (\Throwable $e) {
        return Response::text('error: ' . $e->getMessage());
    }

    return Response::text('not found', 404);
});

function redisClient(string $via, int $port, float $readTimeout): object
{
    if ($via === 'predis') {
        require_once '/usr/share/php/Predis/Autoloader.php';
        \Predis\Autoloader::register();
        $c = new \Predis\Client(['host' => '127.0.0.1', 'port' => $port, 'timeout' => 2.0, 'read_write_timeout' => $readTimeout]);
        $c->connect();

        return $c;
    }
    $r = new \Redis();
    $r->connect('127.0.0.1', $port, 2.0, null, 0, $readTimeout);

    return $r;
}

/** BLPOP with a fractional timeout (Redis 6+): the value, null when it timed out, false when the command failed. */
function blpop(string $via, object $r, string $key, string $timeout): string|null|false
{
    $got = $via === 'predis' ? $r->blpop([$key], $timeout) : $r->rawCommand('BLPOP', $key, $timeout);
    if ($got === false) {
        $err = error_get_last()['message'] ?? '';
        error_clear_last();

        return $err !== '' ? 'failed: ' . $err : false;
    }

    return is_array($got) && isset($got[1]) ? (string) $got[1] : null;
}
