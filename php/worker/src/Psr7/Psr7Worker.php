<?php

declare(strict_types=1);

namespace Ferry\Worker\Psr7;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\Status;
use Nyholm\Psr7\ServerRequest;
use Nyholm\Psr7\Stream;
use Nyholm\Psr7\UploadedFile;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamInterface;
use Psr\Http\Message\ServerRequestInterface;

/**
 * PSR-7 bridge: the handler receives a ServerRequestInterface (Nyholm) and returns a
 * ResponseInterface. Handler: a callable or a PSR-15 RequestHandlerInterface.
 *
 * Everything else (output capture, 500 on exceptions, reset hooks, Fiber mode) is
 * HttpWorker's. Building PSR-7 objects costs time on every request; prefer the raw
 * HttpWorker when the application does not need PSR-7.
 */
final class Psr7Worker
{
    private const NYHOLM_AUTOLOAD = '/usr/share/php/Nyholm/Psr7/autoload.php';

    public function __construct(private readonly HttpWorker $http)
    {
        self::loadNyholm();
    }

    /**
     * @param bool $globals also fill the superglobals for each request, as HttpWorker::create()
     *                      does (for code that reads $_SERVER & co. beside the PSR-7 request)
     */
    public static function create(?bool $fibers = null, bool $globals = false): self
    {
        return new self(HttpWorker::create($globals, $fibers));
    }

    public function http(): HttpWorker
    {
        return $this->http;
    }

    public function onReset(callable $hook): self
    {
        $this->http->onReset($hook);

        return $this;
    }

    /**
     * @param callable(ServerRequestInterface): ResponseInterface|object $handler
     *        a callable, or an object with handle(ServerRequestInterface): ResponseInterface (PSR-15)
     */
    public function run(callable|object $handler): void
    {
        $this->http->run($this->adapt($handler));
    }

    /**
     * @return \Closure(Request): Response
     */
    public function adapt(callable|object $handler): \Closure
    {
        if ($handler instanceof \Psr\Http\Server\RequestHandlerInterface) {
            $call = $handler->handle(...);
        } elseif (\is_callable($handler)) {
            $call = $handler(...);
        } elseif (method_exists($handler, 'handle')) {
            $call = $handler->handle(...);
        } else {
            throw new \InvalidArgumentException('PSR-7 handler must be callable or have a handle() method, got ' . $handler::class);
        }

        return static function (Request $request) use ($call): Response {
            $response = $call(self::toServerRequest($request));
            if (!$response instanceof ResponseInterface) {
                throw new \TypeError('PSR-7 handler must return a ResponseInterface, got ' . get_debug_type($response));
            }

            return self::fromResponse($response);
        };
    }

    public static function toServerRequest(Request $request): ServerRequestInterface
    {
        $uri = $request->uri;
        if ($request->host !== '' && ($uri === '' || $uri[0] === '/')) {
            // The scheme is the gateway's alone: it already honoured X-Forwarded-Proto from
            // trusted proxies (server.trusted_proxies), and anyone else may send that header.
            $uri = ($request->scheme === 'https' ? 'https' : 'http') . '://' . $request->host . $uri;
        }
        $file = $request->bodyFile();
        if ($file !== null) {
            $stream = @fopen($file, 'rb');
            if ($stream === false) {
                throw new \RuntimeException("cannot open the request body file $file: " . (error_get_last()['message'] ?? 'unknown error'));
            }
            $body = Stream::create($stream);
        } else {
            $body = $request->body === '' ? null : Stream::create($request->body);
        }
        $psr = new ServerRequest(
            $request->method,
            $uri,
            $request->headers,
            $body,
            self::protocolVersion($request->protocol),
            $request->server(),
        );
        $psr = $psr->withQueryParams($request->query())->withCookieParams($request->cookies);
        if ($request->parsed || $request->mediaType() === 'application/x-www-form-urlencoded') {
            $psr = $psr->withParsedBody($request->post());
        }
        if ($request->uploads !== []) {
            $psr = $psr->withUploadedFiles(self::uploadedFiles($request->files()));
        }

        return $psr;
    }

    /**
     * "HTTP/1.1" -> "1.1", "HTTP/1.0" -> "1.0"; from HTTP/2 on only the major number
     * exists: "HTTP/2.0" and "HTTP/2" -> "2", "HTTP/3.0" -> "3".
     */
    public static function protocolVersion(string $protocol): string
    {
        $slash = strpos($protocol, '/');
        $version = $slash === false ? '1.1' : substr($protocol, $slash + 1);
        if (preg_match('/\A(\d+)(?:\.(\d+))?\z/', $version, $m) !== 1) {
            return $version;
        }
        $major = (int) $m[1];

        return $major >= 2 ? (string) $major : $major . '.' . (int) ($m[2] ?? 0);
    }

    public static function fromResponse(ResponseInterface $response): Response
    {
        $body = $response->getBody();
        if ($body->isSeekable()) {
            $body->rewind();
        }
        $status = $response->getStatusCode();
        $size = $body->getSize();
        // A body of unknown size (a pipe, a socket, a generator-backed stream: Server-
        // Sent Events; a pipe reports size 0, so not seekable counts as unknown) or a
        // large one is sent in parts as it is read, never whole in memory.
        $answer = $size === null || $size > Response::SPOOL_THRESHOLD || !$body->isSeekable()
            ? Response::stream(self::chunks($body), $status, $response->getHeaders())
            : new Response($status, $response->getHeaders(), $body->getContents());
        $reason = $response->getReasonPhrase();
        // Only a phrase the application chose travels: not Go's standard one, nor the
        // default the PSR-7 implementation fills in by itself (which is what withStatus()
        // without a phrase gives).
        if ($reason !== '' && $reason !== Status::reason($status) && $reason !== $response->withStatus($status)->getReasonPhrase()) {
            $answer->reason($reason);
        }

        return $answer;
    }

    /**
     * The body read in parts of up to 64 KiB; each is sent as soon as it is read.
     *
     * @return \Generator<int, string>
     */
    public static function chunks(StreamInterface $body): \Generator
    {
        try {
            while (!$body->eof()) {
                $part = $body->read(self::CHUNK);
                if ($part !== '') {
                    yield $part;
                }
            }
        } finally {
            $body->close();
        }
    }

    /** Bytes read from a streamed PSR-7 body per part. */
    public const CHUNK = 64 << 10;

    /**
     * $_FILES shape -> tree of UploadedFile mirroring the field names.
     *
     * @param array<string, mixed> $files
     * @return array<string|int, mixed>
     */
    private static function uploadedFiles(array $files): array
    {
        $tree = [];
        foreach ($files as $field => $file) {
            $tree[$field] = self::fileTree($file['name'], $file['type'], $file['tmp_name'], $file['error'], $file['size']);
        }

        return $tree;
    }

    private static function fileTree(mixed $name, mixed $type, mixed $tmp, mixed $error, mixed $size): mixed
    {
        if (!\is_array($name)) {
            return new UploadedFile((string) $tmp, (int) $size, (int) $error, (string) $name, (string) $type);
        }
        $tree = [];
        foreach ($name as $key => $child) {
            $tree[$key] = self::fileTree($child, $type[$key] ?? '', $tmp[$key] ?? '', $error[$key] ?? UPLOAD_ERR_NO_FILE, $size[$key] ?? 0);
        }

        return $tree;
    }

    private static function loadNyholm(): void
    {
        if (class_exists(ServerRequest::class)) {
            return;
        }
        $autoload = getenv('FERRY_NYHOLM_AUTOLOAD') ?: self::NYHOLM_AUTOLOAD;
        if (!is_file($autoload)) {
            throw new \RuntimeException(
                "Psr7Worker needs nyholm/psr7: install php-nyholm-psr7 or set FERRY_NYHOLM_AUTOLOAD (tried $autoload)"
            );
        }
        require_once $autoload;
    }
}
