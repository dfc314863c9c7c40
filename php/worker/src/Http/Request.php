<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\ProtocolException;

/**
 * An HTTP request as raw PHP arrays: no PSR-7 objects, nothing computed until asked for.
 *
 * Query, post, files and server arrays are derived lazily and cached, so a handler that
 * only reads the path pays for nothing else.
 *
 * Over 400 lines: it is the public request API, one class by design (README, "Request"),
 * and its public properties are the ones ext/ferry's request_read() fills in place; the
 * parsing it delegates lives in Form and Superglobals.
 */
final class Request
{
    /** @var array<string|int, mixed>|null */
    private ?array $query = null;
    /** @var array<string|int, mixed>|null */
    private ?array $post = null;
    /** @var array<string, mixed>|null */
    private ?array $files = null;
    /** @var array<string, mixed>|null */
    private ?array $server = null;

    /** whether ext/ferry's context reader is there */
    private static ?bool $ext = null;
    /** @var array<string, true>|null temp paths of this request's uploads not moved yet */
    private ?array $movable = null;
    /** The raw body; read from bodyFile() on first use when the server spooled it to disk. */
    public readonly string $body;

    /**
     * @param array<string, list<string>>         $headers canonical name => values
     * @param array<string|int, mixed>           $cookies decoded as PHP's $_COOKIE
     * @param list<array{0: string, 1: string}>   $form    multipart fields as [name, value]
     * @param list<array{0: string, 1: string, 2: string, 3: string, 4: int, 5: int}> $uploads
     * @param string|null $bodyFile file holding the body instead of $body (owned by the server)
     */
    public function __construct(
        public readonly string $method = 'GET',
        public readonly string $uri = '/',
        public readonly string $path = '/',
        public readonly string $queryString = '',
        public readonly string $protocol = 'HTTP/1.1',
        public readonly string $remoteAddr = '',
        public readonly string $host = '',
        public readonly array $headers = [],
        public readonly array $cookies = [],
        string $body = '',
        public readonly array $form = [],
        public readonly array $uploads = [],
        public readonly bool $parsed = false,
        public readonly float $time = 0.0,
        public readonly string $scheme = 'http',
        public readonly ?string $bodyFile = null,
    ) {
        if ($bodyFile === null) {
            $this->body = $body;
        } else {
            // Left uninitialised so the first read of $body reaches __get(), which loads the file.
            unset($this->body);
        }
    }

    public function __get(string $name): mixed
    {
        if ($name !== 'body') {
            if (property_exists($this, $name)) {
                throw new \Error('Cannot access private property ' . self::class . '::$' . $name);
            }
            trigger_error('Undefined property: ' . self::class . '::$' . $name, E_USER_WARNING);

            return null;
        }
        $contents = @file_get_contents((string) $this->bodyFile);
        if ($contents === false) {
            throw new \RuntimeException("cannot read the request body from {$this->bodyFile}: " . (error_get_last()['message'] ?? 'unknown error'));
        }

        return $this->body = $contents;
    }

    public function __isset(string $name): bool
    {
        return $name === 'body';
    }

    /**
     * Decodes the gateway context (docs/protocol.md, "HTTP request context").
     *
     * @throws ProtocolException when the context is not the documented array
     */
    public static function fromContext(string $context, string $body): self
    {
        // ext/ferry builds the usual request itself, and reads the gateway's own subset of
        // the format for the others; what it leaves (null) is done here, unserialize()
        // being the reference.
        if (self::$ext ??= \function_exists('Ferry\Ext\request_read')) {
            $request = \Ferry\Ext\request_read($context, $body);
            if ($request !== null) {
                return $request;
            }
            $c = \Ferry\Ext\request_context($context);
        }
        $c ??= @unserialize($context, ['allowed_classes' => false, 'max_depth' => 16]);
        if (!\is_array($c) || !isset($c['method'])) {
            throw new ProtocolException(sprintf(
                'HTTP context is not a serialized request array (%d bytes, starts with %s)',
                \strlen($context),
                json_encode(substr($context, 0, 32), JSON_INVALID_UTF8_SUBSTITUTE)
            ));
        }
        try {
            return new self(
                $c['method'],
                $c['uri'] ?? '/',
                $c['path'] ?? '/',
                $c['query'] ?? '',
                $c['protocol'] ?? 'HTTP/1.1',
                $c['remote_addr'] ?? '',
                $c['host'] ?? '',
                $c['headers'] ?? [],
                ($c['cookies'] ?? []) === [] ? [] : (\is_array($c['cookies']) ? self::decodeCookies($c['cookies']) : $c['cookies']),
                $body,
                $c['form'] ?? [],
                $c['files'] ?? [],
                $c['parsed'] ?? false,
                microtime(true),
                $c['scheme'] ?? 'http',
                $c['body_file'] ?? null,
            );
        } catch (\TypeError $e) {
            throw new ProtocolException('HTTP context field has the wrong type: ' . $e->getMessage(), 0, $e);
        }
    }

    /**
     * The query string parsed like $_GET.
     *
     * @return array<string|int, mixed>
     */
    public function query(): array
    {
        if ($this->query === null) {
            $this->query = [];
            if ($this->queryString !== '') {
                parse_str($this->queryString, $this->query);
            }
        }

        return $this->query;
    }

    /**
     * Form fields like $_POST: multipart fields sent by the server, or the urlencoded body.
     * Parsed for any method (PUT/PATCH forms included), unlike PHP-FPM which only fills $_POST for POST.
     *
     * @return array<string|int, mixed>
     */
    public function post(): array
    {
        if ($this->post === null) {
            $this->post = [];
            if ($this->parsed) {
                $this->post = Form::fields($this->form);
            } elseif ($this->mediaType() === 'application/x-www-form-urlencoded' && ($body = $this->body()) !== '') {
                // PHP reads a form body past a NUL byte, where parse_str() stops at it; as "%00"
                // the byte decodes to the same name and value.
                parse_str(str_contains($body, "\0") ? str_replace("\0", '%00', $body) : $body, $this->post);
            }
        }

        return $this->post;
    }

    /**
     * Uploaded files in the $_FILES shape (nested field names nest below name/type/tmp_name/...).
     * The temporary files are removed by the server once the request is answered.
     *
     * @return array<string, mixed>
     */
    public function files(): array
    {
        return $this->files ??= Form::files($this->uploads);
    }

    /**
     * First value of a header, case-insensitive name.
     */
    public function header(string $name, ?string $default = null): ?string
    {
        return ($this->headers[$name] ?? $this->headers[self::canonical($name)] ?? $this->findHeader($name))[0] ?? $default;
    }

    /**
     * All values of a header joined with ", " ('' when absent).
     */
    public function headerLine(string $name): string
    {
        return implode(', ', $this->headers[$name] ?? $this->headers[self::canonical($name)] ?? $this->findHeader($name) ?? []);
    }

    public function hasHeader(string $name): bool
    {
        return $this->header($name) !== null;
    }

    /**
     * A cookie as $_COOKIE holds it: a string, or an array for names like "a[k]" (look up
     * "a"; nested names never appear as keys, exactly as in $_COOKIE).
     *
     * @return string|array<string|int, mixed>|null
     */
    public function cookie(string $name, string|array|null $default = null): string|array|null
    {
        return $this->cookies[$name] ?? $default;
    }

    /**
     * The raw body. When the server spooled a large body to a file it is read once, here
     * (or on first access to $body); use bodyFile() to stream it instead.
     */
    public function body(): string
    {
        return $this->body;
    }

    /**
     * The file holding the body when the server spooled it to disk, else null. The server
     * removes it after the answer: read it during the request.
     */
    public function bodyFile(): ?string
    {
        return $this->bodyFile;
    }

    /**
     * Whether $path is the temp file of one of this request's uploads, not moved yet
     * (PHP's is_uploaded_file() always says no in a worker: the server received the file).
     */
    public function isUploadedFile(string $path): bool
    {
        $this->movable ??= Form::tempPaths($this->uploads);

        return isset($this->movable[$path]);
    }

    /**
     * move_uploaded_file() for a worker: moves one of this request's uploads (its tmp_name)
     * to $to, across filesystems too. Returns false, as PHP does, for any other path or a
     * file already moved; a failed move also raises a warning naming both paths.
     */
    public function moveUploadedFile(string $from, string $to): bool
    {
        if (!$this->isUploadedFile($from)) {
            return false;
        }
        if (!Form::move($from, $to)) {
            trigger_error("Unable to move \"$from\" to \"$to\"", E_USER_WARNING);

            return false;
        }
        unset($this->movable[$from]);

        return true;
    }

    /**
     * Lower-cased media type of the body without parameters ("application/json").
     */
    public function mediaType(): string
    {
        $type = $this->header('Content-Type') ?? '';
        $semicolon = strpos($type, ';');

        return strtolower(trim($semicolon === false ? $type : substr($type, 0, $semicolon)));
    }

    /**
     * The body decoded as JSON.
     *
     * @throws \JsonException
     */
    public function json(bool $associative = true, int $depth = 512): mixed
    {
        return json_decode($this->body, $associative, $depth, JSON_THROW_ON_ERROR);
    }

    /**
     * Request parameters in the $_SERVER shape (REQUEST_METHOD, HTTP_* headers, ...).
     *
     * @return array<string, mixed>
     */
    public function server(): array
    {
        if ($this->server !== null) {
            return $this->server;
        }
        [$ip, $port] = self::splitHostPort($this->remoteAddr);
        [$name, $serverPort] = self::splitHostPort($this->host);
        $server = [
            'REQUEST_METHOD' => $this->method,
            'REQUEST_URI' => $this->uri,
            'DOCUMENT_URI' => $this->path,
            'PATH_INFO' => $this->path,
            'QUERY_STRING' => $this->queryString,
            'SERVER_PROTOCOL' => $this->protocol,
            'SERVER_NAME' => $name,
            'REMOTE_ADDR' => $ip,
            'REMOTE_PORT' => $port,
            'REQUEST_TIME' => (int) $this->time,
            'REQUEST_TIME_FLOAT' => $this->time,
            'REQUEST_SCHEME' => $this->scheme,
        ];
        if ($this->scheme === 'https') {
            $server['HTTPS'] = 'on'; // as nginx's fastcgi_params set it for FPM
        }
        // The port the client addressed, else the scheme's: as the URI a PSR-7 request shows.
        $server['SERVER_PORT'] = $serverPort !== '' ? $serverPort : ($this->scheme === 'https' ? '443' : '80');
        if ($this->host !== '') {
            $server['HTTP_HOST'] = $this->host;
        }
        foreach ($this->headers as $header => $values) {
            $key = strtoupper(strtr($header, '-', '_'));
            if ($key === 'HOST' && $this->host !== '') {
                continue; // the server's host, after trusted proxies, as SERVER_NAME has it
            }
            $value = implode($key === 'COOKIE' ? '; ' : ', ', $values);
            if ($key === 'CONTENT_TYPE' || $key === 'CONTENT_LENGTH') {
                $server[$key] = $value;
            } else {
                $server['HTTP_' . $key] = $value;
            }
        }

        return $this->server = $server;
    }

    /**
     * The server applies PHP's $_COOKIE rules (the split, decoded values, mangled names,
     * the first of two equal names kept) and sends one entry per value: a cookie that
     * nests ("a[k][]") comes as its path, "a[k][0]" => value, which parse_str() turns
     * back into the array PHP would have built. Anything else is $_COOKIE already.
     *
     * @param array<string|int, string> $raw
     * @return array<string|int, mixed>
     */
    public static function decodeCookies(array $raw): array
    {
        foreach ($raw as $name => $_) {
            if (str_contains((string) $name, '[')) {
                $query = '';
                foreach ($raw as $n => $v) {
                    $query .= '&' . urlencode((string) $n) . '=' . urlencode((string) $v);
                }
                parse_str(substr($query, 1), $cookies);

                return $cookies;
            }
        }

        return $raw;
    }

    /**
     * Go's canonical header form: "content-type" -> "Content-Type".
     */
    public static function canonical(string $name): string
    {
        return ucwords(strtolower($name), '-');
    }

    /**
     * @return list<string>|null
     */
    private function findHeader(string $name): ?array
    {
        foreach ($this->headers as $header => $values) {
            if (strcasecmp($header, $name) === 0) {
                return $values;
            }
        }

        return null;
    }

    /**
     * "1.2.3.4:80" / "[::1]:80" / "host" -> [host, port]
     *
     * @return array{string, string}
     */
    private static function splitHostPort(string $address): array
    {
        if ($address === '') {
            return ['', ''];
        }
        if ($address[0] === '[') {
            $end = strpos($address, ']');
            if ($end !== false) {
                $port = substr($address, $end + 1);

                return [substr($address, 1, $end - 1), $port !== '' && $port[0] === ':' ? substr($port, 1) : ''];
            }
        }
        $colon = strrpos($address, ':');
        if ($colon === false || strpos($address, ':') !== $colon) {
            return [$address, ''];
        }

        return [substr($address, 0, $colon), substr($address, $colon + 1)];
    }
}
