<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Middleware;

use Ferry\Tarantool\Exception\ReadOnlyException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;

/**
 * Refuses, before sending, every request that may change data: INSERT, REPLACE, UPDATE, UPSERT,
 * DELETE, SQL other than SELECT/VALUES/EXPLAIN, EVAL, and CALL of functions not allow-listed
 * (a function can write; only the application knows which ones are pure).
 */
final class ReadOnlyFirewall implements Middleware
{
    /** @param list<string> $allowedFunctions CALL targets known to be read-only */
    public function __construct(private readonly array $allowedFunctions = [])
    {
    }

    public function process(Request $request, Handler $next): Response
    {
        if (!$request->isReadOnly()) {
            $fn = $request->body[Iproto::FUNCTION_NAME] ?? null;
            if (!($request->type === Iproto::CALL && \in_array($fn, $this->allowedFunctions, true))) {
                throw new ReadOnlyException('Refused by the read-only firewall: ' . $request->describe());
            }
        }
        return $next->handle($request);
    }
}
