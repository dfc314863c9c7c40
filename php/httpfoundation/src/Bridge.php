<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation;

use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Symfony\Component\HttpFoundation\File\UploadedFile as SymfonyUploadedFile;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;

/**
 * Ferry's raw request to an HttpFoundation Request (Symfony's or Illuminate's), and an
 * HttpFoundation Response back, without PSR-7 in between. Where a choice exists, each
 * side is what the application would get under PHP-FPM behind nginx's front-controller
 * rule (tests/BridgeTest.php pins each).
 */
class Bridge
{
    /** @var array<string, mixed> what every request's server bag starts from */
    private readonly array $baseServer;
    private readonly string $scriptName;
    /** @var \Closure(Request, string, string, ?string, int): SymfonyUploadedFile */
    private readonly \Closure $upload;
    private static ?\Closure $statusText = null;

    /**
     * @param string $frontController absolute path of public/index.php (or whatever the worker runs)
     * @param array<string, mixed>|null $processServer the worker's own $_SERVER (environment included)
     * @param (\Closure(Request, string, string, ?string, int): SymfonyUploadedFile)|null $upload
     *        makes each upload from (request, temp path, client name, client type, error);
     *        an UploadedFile of this package unless a framework wants its own subclass
     */
    public function __construct(string $frontController, ?array $processServer = null, ?\Closure $upload = null)
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
        $this->upload = $upload ?? static fn (Request $request, string $path, string $name, ?string $type, int $error): SymfonyUploadedFile => new UploadedFile($request, $path, $name, $type, $error);
    }

    /**
     * @template T of SymfonyRequest
     *
     * @param class-string<T> $class SymfonyRequest or a subclass with its constructor (Illuminate\Http\Request)
     *
     * @return T
     */
    public function request(Request $request, string $class = SymfonyRequest::class): SymfonyRequest
    {
        $server = $request->server() + $this->baseServer;
        $server['PHP_SELF'] = $this->scriptName . $request->path;

        return new $class(
            $request->query(),
            $request->post(),
            [],
            $request->cookies,
            $this->files($request),
            $server,
            self::content($request),
        );
    }

    /**
     * Every header and cookie attribute is kept. A BinaryFileResponse becomes a file the
     * server sends, a StreamedResponse is spooled as it is produced (see Body).
     */
    public static function response(SymfonyResponse $response): Response
    {
        $answer = new Response($response->getStatusCode());
        // Any phrase the application set, its framework's standard one included, is on
        // FPM's Status line and nginx keeps it. One with a control character would make
        // the server refuse the whole answer: PHP's header() does not send it either.
        $text = (self::$statusText ??= \Closure::bind(static fn (SymfonyResponse $r): string => (string) $r->statusText, null, SymfonyResponse::class))($response);
        if ($text !== '' && preg_match('/[\x00-\x08\x0A-\x1F\x7F]/', $text) !== 1) {
            $answer->reason($text);
        }
        foreach ($response->headers->allPreserveCaseWithoutCookies() as $name => $values) {
            // The server writes its own Date and drops a worker's on every protocol.
            if (strcasecmp((string) $name, 'Date') === 0) {
                continue;
            }
            foreach ($values as $value) {
                if ($value !== null) {
                    $answer->addHeader((string) $name, (string) $value);
                }
            }
        }
        if (!$response->headers->has('Content-Type') && ($type = (string) ini_get('default_mimetype')) !== '') {
            // PHP adds this under FPM when the application set none (an error page the
            // exception handler rendered, for one), from the ini settings of the moment:
            // Symfony empties default_mimetype for a 204 or 304.
            $charset = (string) ini_get('default_charset');
            $answer->header('Content-Type', $charset !== '' && str_starts_with($type, 'text/') ? "$type; charset=$charset" : $type);
        }
        foreach ($response->headers->getCookies() as $cookie) {
            $answer->addHeader('Set-Cookie', (string) $cookie);
        }
        Body::attach($response, $answer);

        return $answer;
    }

    /**
     * The body as php://input has it under FPM: a body the server spooled to disk stays
     * there (HttpFoundation reads a resource lazily), and a multipart body, which the
     * server parsed into fields and files, is empty, however large it was.
     *
     * @return string|resource
     */
    private static function content(Request $request): mixed
    {
        if ($request->parsed) {
            return '';
        }
        $bodyFile = $request->bodyFile();
        $content = $bodyFile !== null ? fopen($bodyFile, 'rb') : false;

        // A file that cannot be opened falls to $body, whose reader says why.
        return $content !== false ? $content : $request->body;
    }

    /**
     * $_FILES' shape turned into UploadedFile trees, as FileBag does, with an UploadedFile
     * whose isValid() and move() work in a worker.
     *
     * @return array<string, mixed>
     */
    private function files(Request $request): array
    {
        if ($request->uploads === []) {
            return [];
        }
        $files = [];
        foreach ($request->files() as $field => $info) {
            $tree = $this->tree($request, $info['name'], $info['type'], $info['tmp_name'], $info['error']);
            // FileBag refuses null at the top level, and turns an empty file input given
            // in $_FILES' shape into null itself, keeping the key as under FPM.
            $files[$field] = $tree ?? $info;
        }

        return $files;
    }

    private function tree(Request $request, mixed $name, mixed $type, mixed $tmp, mixed $error): mixed
    {
        if (\is_array($name)) {
            $out = [];
            foreach ($name as $key => $item) {
                $out[$key] = $this->tree($request, $item, $type[$key] ?? '', $tmp[$key] ?? '', $error[$key] ?? \UPLOAD_ERR_NO_FILE);
            }

            return $out;
        }
        if ((int) $error === \UPLOAD_ERR_NO_FILE) {
            return null;
        }

        return ($this->upload)($request, (string) $tmp, (string) $name, (string) $type === '' ? null : (string) $type, (int) $error);
    }
}
