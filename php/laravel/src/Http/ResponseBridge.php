<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\HttpFoundation\Bridge;
use Ferry\Worker\Http\Response as FerryResponse;
use Symfony\Component\HttpFoundation\Response;

/**
 * A Symfony/Illuminate response to Ferry's: the HttpFoundation bridge's (php/httpfoundation)
 * status and phrase, headers, every cookie attribute, a download as a file the server
 * reads and a streamed response spooled.
 */
final class ResponseBridge
{
    public static function toFerry(Response $response): FerryResponse
    {
        return Bridge::response($response);
    }
}
