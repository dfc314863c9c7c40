<?php

declare(strict_types=1);

namespace Ferry\Symfony;

use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\SymfonyBody;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;

/**
 * Ferry's raw request to an HttpFoundation Request, and an HttpFoundation Response back,
 * without PSR-7 in between.
 */
final class Bridge
{
    /** @var array<string, mixed> what every request's server bag starts from */
    private readonly array $baseServer;
    private readonly string $scriptName;
    private static ?\Closure $statusText = null;

    /**
     * @param string $frontController absolute path of public/index.php (or whatever the worker runs)
     * @param array<string, mixed>|null $processServer the worker's own $_SERVER (environment included)
     */
    public function __construct(string $frontController, ?array $processServer = null)
    {
        $server = $processServer ?? $_SERVER;
        foreach ($server as $key => $value) {
            // The CLI's own entries describe the worker command, not a request; an
            // environment variable named like a header (HTTP_PROXY) must not pose as one.
            if (!\is_string($key) || str_starts_with($key, 'HTTP_') || \in_array($key, ['argv', 'argc', 'PATH_TRANSLATED', 'CONTENT_TYPE', 'CONTENT_LENGTH'], true)) {
                unset($server[$key]);
            }
        }
        // What FPM behind nginx's front-controller rule gives Symfony (SCRIPT_NAME
        // /index.php): the base URL is '' and the path info is the request path.
        $this->scriptName = '/' . basename($frontController);
        $server['SCRIPT_FILENAME'] = $frontController;
        $server['SCRIPT_NAME'] = $this->scriptName;
        $server['DOCUMENT_ROOT'] = \dirname($frontController);
        $this->baseServer = $server;
    }

    public function request(Request $request): SymfonyRequest
    {
        $server = $request->server() + $this->baseServer;
        $server['PHP_SELF'] = $this->scriptName . $request->path;
        $bodyFile = $request->bodyFile();
        // A body the server spooled to disk stays there: HttpFoundation reads a resource lazily.
        $content = $bodyFile !== null && !$request->parsed ? fopen($bodyFile, 'rb') : null;

        return new SymfonyRequest(
            $request->query(),
            $request->post(),
            [],
            $request->cookies,
            $this->files($request),
            $server,
            $content === null || $content === false ? $request->body : $content,
        );
    }

    /**
     * Every header and cookie attribute is kept. A StreamedResponse or
     * BinaryFileResponse is produced through the worker's output capture, so its body is
     * in memory once the callback has run: Ferry's answer has no streamed or file form yet.
     */
    public function response(SymfonyResponse $response): Response
    {
        $answer = new Response($response->getStatusCode());
        $text = (self::$statusText ??= \Closure::bind(static fn (SymfonyResponse $r): string => (string) $r->statusText, null, SymfonyResponse::class))($response);
        if ($text !== '' && preg_match('/[\x00-\x08\x0A-\x1F\x7F]/', $text) !== 1) {
            $answer->reason($text);
        }
        foreach ($response->headers->allPreserveCaseWithoutCookies() as $name => $values) {
            foreach ($values as $value) {
                $answer->addHeader((string) $name, (string) $value);
            }
        }
        foreach ($response->headers->getCookies() as $cookie) {
            $answer->addHeader('Set-Cookie', (string) $cookie);
        }
        SymfonyBody::attach($response, $answer);

        return $answer;
    }

    /**
     * $_FILES' shape turned into UploadedFile trees, as FileBag does, with Ferry's
     * UploadedFile so that isValid() and move() work in a worker.
     *
     * @return array<string, mixed>
     */
    private function files(Request $request): array
    {
        $files = [];
        foreach ($request->files() as $field => $info) {
            $tree = self::tree($request, $info['name'], $info['type'], $info['tmp_name'], $info['error'], $info['size']);
            // FileBag refuses null at the top level, and turns an empty file input given
            // in $_FILES' shape into null itself.
            $files[$field] = $tree ?? $info;
        }

        return $files;
    }

    private static function tree(Request $request, mixed $name, mixed $type, mixed $tmp, mixed $error, mixed $size): mixed
    {
        if (\is_array($name)) {
            $out = [];
            foreach ($name as $key => $item) {
                $out[$key] = self::tree($request, $item, $type[$key] ?? '', $tmp[$key] ?? '', $error[$key] ?? \UPLOAD_ERR_NO_FILE, $size[$key] ?? 0);
            }

            return $out;
        }
        if ((int) $error === \UPLOAD_ERR_NO_FILE) {
            return null;
        }

        return new UploadedFile($request, (string) $tmp, (string) $name, (string) $type === '' ? null : (string) $type, (int) $error);
    }
}
