<?php

declare(strict_types=1);

namespace App\Http\Middleware;

use Closure;
use Illuminate\Http\Request;
use Symfony\Component\HttpFoundation\Response;

/** A terminable middleware: terminate() must run after the client has its answer. */
final class RecordTerminate
{
    public function handle(Request $request, Closure $next): Response
    {
        return $next($request);
    }

    public function terminate(Request $request, Response $response): void
    {
        file_put_contents(storage_path('terminated-middleware.txt'), $request->query('tag', '') . "\n", FILE_APPEND);
    }
}
