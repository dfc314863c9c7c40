<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

/**
 * @internal The superglobals HttpWorker sets for each request. PHP fills them once per
 * process in a worker, so what one request writes into them would be the next one's
 * unless each request starts from a kept copy, as under FPM, where each request starts
 * with fresh ones.
 */
final class Superglobals
{
    /**
     * The superglobals as they are now, to be put back by restore().
     *
     * @return array<string, array<mixed>> by name without `$` (ext/ferry's loop reads it so)
     */
    public static function keep(): array
    {
        return ['_SERVER' => $_SERVER, '_GET' => $_GET, '_POST' => $_POST, '_COOKIE' => $_COOKIE,
            '_FILES' => $_FILES, '_REQUEST' => $_REQUEST, '_ENV' => $_ENV];
    }

    /**
     * Puts back what keep() took, so that what a request wrote into them ($_SERVER['X'] =
     * ..., a $_GET filled by a framework) is not the next one's. Assigning a kept array
     * copies nothing until someone writes to it.
     *
     * In Fiber mode the superglobals are still one set per process: a request sees what the
     * requests interleaved with it write, and each request start puts them back for all.
     *
     * @param array<string, array<mixed>> $kept
     */
    public static function restore(array $kept): void
    {
        $_SERVER = $kept['_SERVER'];
        $_GET = $kept['_GET'];
        $_POST = $kept['_POST'];
        $_COOKIE = $kept['_COOKIE'];
        $_FILES = $kept['_FILES'];
        $_REQUEST = $kept['_REQUEST'];
        $_ENV = $kept['_ENV'];
    }

    /**
     * $_GET, $_POST, $_COOKIE, $_FILES and $_SERVER from the request (globals mode), over
     * $server, the process's own $_SERVER.
     *
     * @param array<string, mixed> $server
     */
    public static function fill(Request $request, array $server): void
    {
        $_GET = $request->query();
        $_POST = $request->post();
        $_COOKIE = $request->cookies;
        $_FILES = $request->files();
        $_SERVER = $request->server() + $server;
    }
}
