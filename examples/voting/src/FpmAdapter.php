<?php

declare(strict_types=1);

namespace Voting;

/** PHP's superglobals and header() <-> the app's request/response (PHP-FPM, or any SAPI). */
final class FpmAdapter
{
    public static function request(): AppRequest
    {
        $cookie = $_COOKIE[App::COOKIE] ?? null;
        $path = parse_url((string) ($_SERVER['REQUEST_URI'] ?? '/'), PHP_URL_PATH);
        return new AppRequest(
            (string) ($_SERVER['REQUEST_METHOD'] ?? 'GET'),
            \is_string($path) && $path !== '' ? $path : '/',
            \is_string($cookie) ? $cookie : null,
            (string) ($_SERVER['REMOTE_ADDR'] ?? ''),
            (string) ($_SERVER['HTTP_USER_AGENT'] ?? ''),
            $_POST,
            str_contains((string) ($_SERVER['HTTP_ACCEPT'] ?? ''), 'application/json'),
        );
    }

    public static function send(AppResponse $a): void
    {
        http_response_code($a->status);
        foreach ($a->headers as $name => $values) {
            foreach ((array) $values as $value) {
                header("$name: $value", false);
            }
        }
        echo $a->body;
    }
}
