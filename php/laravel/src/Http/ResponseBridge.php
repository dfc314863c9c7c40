<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\Worker\Http\Response as FerryResponse;
use Ferry\Worker\Http\SymfonyBody;
use Symfony\Component\HttpFoundation\Response;

/**
 * A Symfony/Illuminate response to Ferry's: status and phrase, headers as set (case kept),
 * every cookie with all its attributes, and the body (a download as a file the server
 * reads, a streamed response spooled: see SymfonyBody).
 */
final class ResponseBridge
{
    public static function toFerry(Response $response): FerryResponse
    {
        $status = $response->getStatusCode();
        $ferry = new FerryResponse($status);
        $phrase = (fn (): string => (string) $this->statusText)->call($response);
        if ($phrase !== '' && $phrase !== (Response::$statusTexts[$status] ?? '')) {
            $ferry->reason($phrase);
        }
        foreach ($response->headers->allPreserveCaseWithoutCookies() as $name => $values) {
            // The server writes its own Date.
            if (strcasecmp($name, 'Date') === 0) {
                continue;
            }
            foreach ($values as $value) {
                if ($value !== null) {
                    $ferry->addHeader($name, (string) $value);
                }
            }
        }
        if (!$response->headers->has('Content-Type') && ($type = (string) ini_get('default_mimetype')) !== '') {
            // PHP adds this under FPM when the application set none (error pages rendered
            // by the exception handler, for one).
            $charset = (string) ini_get('default_charset');
            $ferry->header('Content-Type', $charset !== '' && str_starts_with($type, 'text/') ? "$type; charset=$charset" : $type);
        }
        foreach ($response->headers->getCookies() as $cookie) {
            $ferry->addHeader('Set-Cookie', (string) $cookie);
        }
        SymfonyBody::attach($response, $ferry);

        return $ferry;
    }
}
