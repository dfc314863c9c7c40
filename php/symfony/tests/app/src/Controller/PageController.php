<?php

declare(strict_types=1);

namespace App\Controller;

use App\Service\CookieQueue;
use Symfony\Component\HttpFoundation\BinaryFileResponse;
use Symfony\Component\HttpFoundation\Cookie;
use Symfony\Component\HttpFoundation\File\UploadedFile;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpFoundation\ResponseHeaderBag;
use Symfony\Component\HttpFoundation\StreamedResponse;

final class PageController
{
    public function __construct(private readonly CookieQueue $cookies, private readonly string $varDir)
    {
    }

    public function home(): Response
    {
        return new Response("Symfony on Ferry\n", 200, ['Content-Type' => 'text/plain; charset=UTF-8']);
    }

    public function hello(Request $request, string $name): JsonResponse
    {
        return new JsonResponse([
            'hello' => $name,
            'query' => $request->query->all(),
            'method' => $request->getMethod(),
            'path_info' => $request->getPathInfo(),
            'base_url' => $request->getBaseUrl(),
            'uri' => $request->getUri(),
            'scheme' => $request->getScheme(),
            'secure' => $request->isSecure(),
            'host' => $request->getHttpHost(),
            'client_ip' => $request->getClientIp(),
            'script_name' => $request->server->get('SCRIPT_NAME'),
            'header' => $request->headers->get('X-Custom'),
            'pid' => getmypid(),
        ]);
    }

    public function form(Request $request): JsonResponse
    {
        $name = trim((string) $request->request->get('name', ''));
        if ($name === '') {
            return new JsonResponse(['errors' => ['name' => 'required']], 422);
        }

        return new JsonResponse(['name' => $name, 'fields' => $request->request->all()], 201);
    }

    public function json(Request $request): JsonResponse
    {
        return new JsonResponse(['received' => $request->toArray(), 'type' => $request->getContentType()]);
    }

    public function upload(Request $request): JsonResponse
    {
        $moved = [];
        $all = $request->files->all();
        array_walk_recursive($all, function (?UploadedFile $file, $field) use (&$moved): void {
            if ($file === null) {
                return;
            }
            $entry = ['field' => $field, 'name' => $file->getClientOriginalName(), 'valid' => $file->isValid(), 'error' => $file->getError()];
            if ($file->isValid()) {
                $tmp = $file->getPathname();
                $target = $file->move($this->varDir . '/uploads/' . bin2hex(random_bytes(6)), $file->getClientOriginalName());
                $entry += [
                    'size' => $target->getSize(),
                    'sha1' => sha1_file($target->getPathname()),
                    'moved_to' => $target->getPathname(),
                    'tmp_left' => file_exists($tmp),
                    'valid_after_move' => $file->isValid(),
                ];
            }
            $moved[] = $entry;
        });

        return new JsonResponse(['files' => $moved, 'fields' => $request->request->all()]);
    }

    public function setCookies(): Response
    {
        $response = new Response('cookies set');
        $response->headers->setCookie(Cookie::create('pref', 'dark mode; v=1', new \DateTimeImmutable('2030-01-02 03:04:05 UTC'), '/app', 'example.test', true, true, false, Cookie::SAMESITE_STRICT));
        $response->headers->setCookie(Cookie::create('plain', 'x'));

        return $response;
    }

    public function readCookies(Request $request): JsonResponse
    {
        return new JsonResponse($request->cookies->all());
    }

    public function counter(Request $request): JsonResponse
    {
        $session = $request->getSession();
        $count = $session->get('count', 0) + 1;
        $session->set('count', $count);

        return new JsonResponse(['count' => $count]);
    }

    public function login(Request $request): JsonResponse
    {
        $user = (string) $request->request->get('user', '');
        $request->getSession()->set('user', $user);
        $this->cookies->queue(Cookie::create('user', $user));

        return new JsonResponse(['user' => $user]);
    }

    public function whoami(Request $request): JsonResponse
    {
        $session = $request->getSession();
        $seen = $session->get('seen', 0) + 1;
        $session->set('seen', $seen);
        if ($request->query->has('note')) {
            // Queued for this user only: a leak would show it in the other user's response.
            $this->cookies->queue(Cookie::create('note', (string) $request->query->get('note')));
        }

        return new JsonResponse([
            'session_user' => $session->get('user'),
            'cookie_user' => $request->cookies->get('user'),
            'seen' => $seen,
            'queued' => $this->cookies->count(),
            'pid' => getmypid(),
        ]);
    }

    public function stream(): StreamedResponse
    {
        return new StreamedResponse(static function (): void {
            for ($i = 1; $i <= 5; ++$i) {
                echo "chunk $i\n";
                flush();
            }
        }, 200, ['Content-Type' => 'text/plain; charset=UTF-8']);
    }

    public function file(): BinaryFileResponse
    {
        return (new BinaryFileResponse(\dirname(__DIR__, 2) . '/data/report.txt', 200, ['Content-Type' => 'text/plain']))
            ->setContentDisposition(ResponseHeaderBag::DISPOSITION_ATTACHMENT, 'report.txt');
    }

    public function fail(): Response
    {
        throw new \RuntimeException('controller failed on purpose');
    }

    public function fatal(): Response
    {
        // Past memory_limit: a fatal error no handler can catch.
        $blocks = [];
        while (true) {
            $blocks[] = str_repeat('x', 1 << 20);
        }
    }

    public function linger(Request $request): Response
    {
        $request->attributes->set('_linger', $request->query->getInt('ms'));

        return new Response('answered before the terminate listener ran', 200, ['X-Pid' => (string) getmypid()]);
    }

    /**
     * Which worker loop called the controller: ext/ferry's (ext) or the SDK's (php). With
     * ?wait=FIFO the terminate listener then waits for a line on that FIFO.
     */
    public function via(Request $request): Response
    {
        $request->attributes->set('_wait', $request->query->get('wait'));

        return new Response(self::loop(), 200, ['Content-Type' => 'text/plain; charset=UTF-8']);
    }

    public static function loop(): string
    {
        return \in_array('Ferry\\Ext\\http_serve', array_column(debug_backtrace(), 'function'), true) ? 'ext' : 'php';
    }

    public function resetProbe(): JsonResponse
    {
        $this->cookies->queue(Cookie::create('probe', '1'));

        return new JsonResponse([
            'queued' => $this->cookies->count(),
            'resets' => $this->cookies->resets,
            'pid' => getmypid(),
        ]);
    }
}
