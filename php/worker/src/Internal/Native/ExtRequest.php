<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Http\Form;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Worker;

/**
 * @internal HttpWorker's side of ext/ferry (ext/ferry/README.md): a request boundary as
 * FPM draws it, so header(), setcookie(), http_response_code(), session_start() and
 * move_uploaded_file() work in a sequential worker, and the merge of what PHP collected
 * with what the handler returned (php/worker/README.md, "With ext/ferry").
 */
final class ExtRequest
{
    public static function available(): bool
    {
        return \extension_loaded('ferry');
    }

    /**
     * Starts PHP's request state for $request: no headers, status 200, no session, and
     * the temp files of its uploads accepted by is_uploaded_file()/move_uploaded_file().
     */
    public static function begin(Request $request): void
    {
        \Ferry\Ext\request_begin();
        if ($request->uploads !== []) {
            foreach (Form::tempPaths($request->uploads) as $path => $_) {
                \Ferry\Ext\register_uploaded_file((string) $path);
            }
        }
    }

    /**
     * Ends the request and returns the answer for what the handler returned: a returned
     * Response wins on status and on each header name it sets (Set-Cookie: PHP's first,
     * then the Response's); a string or array gets the status and headers PHP collected,
     * over the SDK's Content-Type for it.
     *
     * @param Response|string|array<mixed> $result
     */
    public static function answer(mixed $result): Response
    {
        // Without PHP's default Content-Type: a Response has its own, and for a string or
        // an array the SDK's (HTML, JSON) stays unless the handler set one, as without
        // the extension.
        // expose_php's X-Powered-By is left out: the pure-PHP SDK never sends it either.
        return self::answerWith($result, \Ferry\Ext\request_end(false, false));
    }

    /**
     * answer() for the state request_end(false, false) returned.
     *
     * @param Response|string|array<mixed> $result
     * @param array{status: int, reason?: string, headers: array<string, list<string>>} $php
     */
    public static function answerWith(mixed $result, array $php): Response
    {
        if ($php['headers'] === [] && $php['status'] === 200 && !isset($php['reason'])) {
            // The usual request: PHP's header functions were not used, nothing to merge.
            return $result instanceof Response ? $result : HttpWorker::toResponse($result);
        }
        if ($result instanceof Response) {
            return self::merge($result, $php['headers']);
        }
        $response = HttpWorker::toResponse($result, $php['status']);
        if (isset($php['reason'])) {
            $response->reason($php['reason']);
        }
        foreach ($php['headers'] as $name => $values) {
            $response->header($name, $values);
        }

        return $response;
    }

    /**
     * Ends a front controller's request: status, phrase and headers exactly as FPM would
     * send them, PHP's default Content-Type included; the body is the captured output.
     */
    public static function frontControllerAnswer(): Response
    {
        $php = \Ferry\Ext\request_end(true, false);
        $response = new Response($php['status']);
        if (isset($php['reason'])) {
            $response->reason($php['reason']);
        }
        foreach ($php['headers'] as $name => $values) {
            $response->header($name, $values);
        }

        return $response;
    }

    /**
     * Closes a request the handler left by throwing (PHP's session written, uploads
     * forgotten, headers dropped). A failure here is only logged: the job is answered
     * with the handler's error already.
     */
    public static function abandon(): void
    {
        if (!\Ferry\Ext\in_request()) {
            return;
        }
        try {
            \Ferry\Ext\request_end(false);
        } catch (\Throwable $e) {
            Worker::log('ending the failed request raised ' . Worker::describe($e));
        }
    }

    /**
     * @param array<string, list<string>> $collected headers PHP collected, X-Powered-By filtered
     */
    public static function merge(Response $response, array $collected): Response
    {
        if ($collected === []) {
            return $response;
        }
        // A handler may return the same Response object every time: it must not keep
        // this request's headers.
        $merged = clone $response;
        foreach ($collected as $name => $values) {
            $own = $response->getHeader($name);
            if ($own === []) {
                $merged->header($name, $values);
            } elseif (strcasecmp($name, 'Set-Cookie') === 0) {
                $merged->header($name, [...$values, ...$own]);
            }
        }

        return $merged;
    }
}
