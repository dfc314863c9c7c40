<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * Authenticates as $user whenever the connection's session is new: on first use and after
 * every reconnect. (Credentials in the URI do the same inside Connection; this middleware is
 * for credentials decided at run time, or to switch users on a shared connection.)
 */
final class AuthMiddleware implements Middleware
{
    private int $authenticatedGeneration = -1;

    public function __construct(
        private readonly Connection $connection,
        private readonly string $user,
        #[\SensitiveParameter] private readonly string $password,
    ) {
    }

    public function process(Request $request, Handler $next): Response
    {
        $c = $this->connection;
        if (!$c->isConnected() || $c->generation() !== $this->authenticatedGeneration) {
            $c->authenticate($this->user, $this->password);
            $this->authenticatedGeneration = $c->generation();
        }
        return $next->handle($request);
    }
}
