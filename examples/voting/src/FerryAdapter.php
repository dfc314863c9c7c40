<?php

declare(strict_types=1);

namespace Voting;

use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

/** Ferry worker SDK request/response <-> the app's own. */
final class FerryAdapter
{
    public static function request(Request $r): AppRequest
    {
        $cookie = $r->cookies[App::COOKIE] ?? null;
        return new AppRequest(
            $r->method,
            $r->path,
            \is_string($cookie) ? $cookie : null,
            AppRequest::hostOf($r->remoteAddr),
            $r->header('User-Agent') ?? '',
            $r->method === 'POST' ? $r->post() : [],
            str_contains($r->header('Accept') ?? '', 'application/json'),
        );
    }

    public static function response(AppResponse $a): Response
    {
        return new Response($a->status, $a->headers, $a->body);
    }
}
