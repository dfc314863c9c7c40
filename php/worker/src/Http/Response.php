<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\Internal\Environment;

/**
 * A mutable, allocation-light HTTP response. Header names keep the case they were given;
 * setting a header replaces any earlier one with the same name in any case.
 *
 * Over 400 lines: it is the public response API, one class by design (README,
 * "Response"), and ext/ferry's loops read its state by slot; streams go to
 * StreamedAnswer, the answer encoding is context().
 */
final class Response
{
    /** @var array<string, list<string>> */
    private array $headers = [];
    /** @var array<string, string> lower-case name => name as stored */
    private array $names = [];
    /** phrase for the status line, '' for the server's standard one */
    private string $reason = '';
    /** @var array<string, self> Content-Type => the untouched response preset() copies */
    private static array $presets = [];

    // Read by ext/ferry's loops (the worker contract, ext/ferry/README.md): public so that C
    // never reads private state. Set them through the methods, which keep them consistent.

    /** @internal the status; set it with status() */
    public int $status;
    /** @internal Content-Type set by text()/html()/json() while it is still the only header, else null */
    public ?string $preset = null;
    /** @internal @var array<int, array<string, string>> status => preset type => answer context */
    public static array $presetContexts = [];
    /** @internal @var array{path: string, offset: int, length?: int, delete: bool}|null the body the server reads from a file; set it with sendFile() */
    public ?array $file = null;
    /** @internal @var iterable<mixed>|null the body as parts sent as they come; set it with stream() */
    public ?iterable $parts = null;

    /** Output up to this size stays in memory in fromOutput(); more goes to a temp file. */
    public const SPOOL_THRESHOLD = 1 << 20;

    /**
     * @param array<string, string|list<string>> $headers
     */
    public function __construct(int $status = 200, array $headers = [], public string $body = '')
    {
        $this->status($status);
        foreach ($headers as $name => $value) {
            $this->header((string) $name, $value);
        }
    }

    public static function text(string $body, int $status = 200): self
    {
        return self::preset('text/plain; charset=utf-8', $body, $status);
    }

    public static function html(string $body, int $status = 200): self
    {
        return self::preset('text/html; charset=utf-8', $body, $status);
    }

    /**
     * @throws \JsonException
     */
    public static function json(mixed $data, int $status = 200, int $flags = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE): self
    {
        return self::preset('application/json', json_encode($data, $flags | JSON_THROW_ON_ERROR), $status);
    }

    /**
     * A response with only a Content-Type: a copy of one made once per type, which costs
     * a handler less than a constructor call and two arrays per response.
     */
    private static function preset(string $type, string $body, int $status): self
    {
        $response = clone (self::$presets[$type] ??= (new self())->withContentType($type));
        if ($status !== 200) {
            $response->status($status);
        }
        $response->body = $body;

        return $response;
    }

    public static function redirect(string $location, int $status = 302): self
    {
        return new self($status, ['Location' => $location]);
    }

    /**
     * A download: the server reads the body from $path itself (with sendfile), so the
     * file never passes through PHP's memory nor the relay. $offset and $length select a
     * part (a range the application answers with 206 itself). With $deleteAfterSend the
     * server removes the file once it has opened it: the application must not touch it
     * after returning.
     */
    public static function file(
        string $path,
        string $contentType = 'application/octet-stream',
        int $offset = 0,
        ?int $length = null,
        bool $deleteAfterSend = false,
        int $status = 200,
    ): self {
        return (new self($status, ['Content-Type' => $contentType]))->sendFile($path, $offset, $length, $deleteAfterSend);
    }

    /**
     * The body becomes the given part of a file the server reads (see file()); the body
     * string is emptied.
     */
    public function sendFile(string $path, int $offset = 0, ?int $length = null, bool $deleteAfterSend = false): self
    {
        if ($path === '' || $path[0] !== '/' || preg_match('//u', $path) !== 1) {
            throw new \InvalidArgumentException('the file to send must be an absolute UTF-8 path, got ' . json_encode($path, JSON_INVALID_UTF8_SUBSTITUTE));
        }
        if (!is_file($path) || !is_readable($path)) {
            throw new \InvalidArgumentException("the file to send, $path, is not a readable regular file");
        }
        $size = (int) filesize($path);
        if ($offset < 0 || $offset > $size || ($length !== null && ($length < 0 || $length > $size - $offset))) {
            throw new \InvalidArgumentException(sprintf('bytes %d+%s of %s are past its size %d', $offset, $length ?? 'rest', $path, $size));
        }
        $this->parts = null;
        $this->file = ['path' => $path, 'offset' => $offset, 'delete' => $deleteAfterSend];
        if ($length !== null) {
            $this->file['length'] = $length;
        }
        $this->body = '';
        $this->preset = null;

        return $this;
    }

    /**
     * A response whose body is sent in parts as $parts yields them (a generator, any
     * iterable of strings): each part reaches the client as soon as it is produced
     * (chunked encoding), so a large body never sits whole in memory and Server-Sent
     * Events work. When the client goes away, the generator is not resumed: a
     * StreamStoppedException is thrown into it at its current yield (catch it, or use
     * finally, to clean up) and the worker moves on to the next request.
     *
     * @param iterable<mixed> $parts
     * @param array<string, string|list<string>> $headers
     */
    public static function stream(iterable $parts, int $status = 200, array $headers = []): self
    {
        $response = new self($status, $headers);
        $response->parts = $parts;

        return $response;
    }

    /**
     * @return iterable<mixed>|null the parts of a streamed body, null for a plain one
     */
    public function getParts(): ?iterable
    {
        return $this->parts;
    }

    /**
     * Sends a 103 Early Hints response now, before the final one, so that the client
     * starts loading what $headers name (Link: </app.css>; rel=preload; as=style) while
     * the application still works. Call it during a request served by HttpWorker; it
     * returns false when there is none, or when the client has gone. Clients that
     * do not understand 1xx ignore it, and the server drops it on HTTP/1.0.
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function earlyHints(array $headers): bool
    {
        return StreamedAnswer::earlyHints((new self(103, $headers))->headers);
    }

    /**
     * A response whose body is what $emit prints (a template engine, a CSV export, a
     * framework's streamed response). Up to SPOOL_THRESHOLD bytes it stays in memory;
     * beyond, it is written to a temp file as it is printed and the server sends and
     * deletes that file, so a large body never sits whole in PHP's memory. The client
     * gets the body once $emit has returned. Under Ferry the file is in the worker's own
     * directory (FERRY_SPOOL_DIR), which the server removes if the worker dies before
     * answering; elsewhere in sys_get_temp_dir().
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function fromOutput(callable $emit, int $status = 200, array $headers = []): self
    {
        return (new self($status, $headers))->output($emit);
    }

    /**
     * The body becomes what $emit prints, kept in memory or spooled as fromOutput() says.
     * If $emit throws, nothing is kept and the exception goes on.
     */
    public function output(callable $emit): self
    {
        $memory = '';
        $spool = null;
        $path = '';
        $sink = static function (string $chunk) use (&$memory, &$spool, &$path): string {
            if ($spool === null && \strlen($memory) + \strlen($chunk) <= self::SPOOL_THRESHOLD) {
                $memory .= $chunk;

                return '';
            }
            if ($spool === null) {
                $path = (string) tempnam(Environment::spoolDir(), 'ferry-out-');
                $spool = fopen($path, 'wb');
                if ($spool === false) {
                    throw new \RuntimeException("cannot spool the response to $path");
                }
                fwrite($spool, $memory);
                $memory = '';
            }
            if (fwrite($spool, $chunk) !== \strlen($chunk)) {
                throw new \RuntimeException("cannot spool the response to $path: disk full?");
            }

            return '';
        };
        ob_start($sink, 64 << 10);
        $level = ob_get_level();
        try {
            $emit();
        } catch (\Throwable $e) {
            while (ob_get_level() >= $level) {
                ob_end_clean();
            }
            if ($spool !== null) {
                fclose($spool);
                unlink($path);
            }
            throw $e;
        }
        while (ob_get_level() >= $level) {
            ob_end_flush();
        }
        if ($spool === null) {
            $this->file = null;
            $this->body = $memory;
            $this->preset = null;

            return $this;
        }
        fclose($spool);

        return $this->sendFile($path, deleteAfterSend: true);
    }

    /**
     * @return array{path: string, offset: int, length?: int, delete: bool}|null
     */
    public function getFile(): ?array
    {
        return $this->file;
    }

    /** Skips header validation for the helpers' own constant values (hot path). */
    private function withContentType(string $type): self
    {
        $this->headers['Content-Type'] = [$type];
        $this->names['content-type'] = 'Content-Type';
        $this->preset = \count($this->headers) === 1 ? $type : null;

        return $this;
    }

    public function getStatus(): int
    {
        return $this->status;
    }

    /**
     * @param string|null $reason a phrase for the status line; null keeps the current one
     */
    public function status(int $status, ?string $reason = null): self
    {
        if ($status < 100 || $status > 599) {
            throw new \InvalidArgumentException("HTTP status must be within 100..599, got $status");
        }
        $this->status = $status;
        if ($reason !== null) {
            $this->reason($reason);
        }

        return $this;
    }

    /**
     * Sets the status line's phrase ("" for the standard one). HTTP/2 and HTTP/3 have no
     * phrase: clients on them never see it.
     */
    public function reason(string $reason): self
    {
        if (preg_match('/[\x00-\x08\x0A-\x1F\x7F]/', $reason) === 1) {
            throw new \InvalidArgumentException('reason phrase contains a control character');
        }
        $this->reason = $reason;
        $this->preset = null;

        return $this;
    }

    /**
     * The phrase set with reason(), or the standard one for the status.
     */
    public function getReason(): string
    {
        return $this->reason !== '' ? $this->reason : Status::reason($this->status);
    }

    /**
     * Sets a header, replacing earlier values of the same name (case-insensitive).
     *
     * @param string|list<string> $value
     */
    public function header(string $name, string|array $value): self
    {
        $this->removeHeader($name);
        foreach ((array) $value as $item) {
            $this->addHeader($name, (string) $item);
        }

        return $this;
    }

    /**
     * Adds one more value to a header.
     */
    public function addHeader(string $name, string $value): self
    {
        $this->preset = null;
        $lower = strtolower($name);
        if (!isset($this->names[$lower])) {
            if (!preg_match('/^[!#$%&\'*+\-.^_`|~0-9A-Za-z]+$/D', $name)) {
                throw new \InvalidArgumentException("invalid HTTP header name \"$name\"");
            }
            $this->names[$lower] = $name;
        }
        if (strpbrk($value, "\r\n\0") !== false) {
            throw new \InvalidArgumentException("header $name: value contains CR, LF or NUL");
        }
        $this->headers[$this->names[$lower]][] = $value;

        return $this;
    }

    public function removeHeader(string $name): self
    {
        $this->preset = null;
        $lower = strtolower($name);
        if (isset($this->names[$lower])) {
            unset($this->headers[$this->names[$lower]], $this->names[$lower]);
        }

        return $this;
    }

    public function getHeader(string $name): array
    {
        $lower = strtolower($name);

        return isset($this->names[$lower]) ? $this->headers[$this->names[$lower]] : [];
    }

    /**
     * @return array<string, list<string>>
     */
    public function getHeaders(): array
    {
        return $this->headers;
    }

    /**
     * Adds a Set-Cookie header, formatted like PHP's setcookie() (value URL-encoded).
     *
     * @param int $expires Unix time, 0 for a session cookie
     */
    public function cookie(
        string $name,
        string $value,
        int $expires = 0,
        string $path = '',
        string $domain = '',
        bool $secure = false,
        bool $httpOnly = false,
        string $sameSite = '',
    ): self {
        if ($name === '' || strpbrk($name, "=,; \t\r\n\013\014") !== false) {
            throw new \InvalidArgumentException("invalid cookie name \"$name\"");
        }
        $line = $name . '=' . rawurlencode($value);
        if ($expires !== 0) {
            $line .= '; expires=' . gmdate('D, d M Y H:i:s \G\M\T', $expires)
                . '; Max-Age=' . max(0, $expires - time());
        }
        foreach (['path' => $path, 'domain' => $domain] as $attribute => $attributeValue) {
            if ($attributeValue !== '') {
                if (strpbrk($attributeValue, ",; \t\r\n\013\014") !== false) {
                    throw new \InvalidArgumentException("cookie $name: invalid $attribute \"$attributeValue\"");
                }
                $line .= "; $attribute=$attributeValue";
            }
        }
        if ($secure) {
            $line .= '; secure';
        }
        if ($httpOnly) {
            $line .= '; HttpOnly';
        }
        if ($sameSite !== '') {
            if (!\in_array(strtolower($sameSite), ['lax', 'strict', 'none'], true)) {
                throw new \InvalidArgumentException("cookie $name: SameSite must be Lax, Strict or None, got \"$sameSite\"");
            }
            $line .= '; SameSite=' . $sameSite;
        }

        return $this->addHeader('Set-Cookie', $line);
    }

    /**
     * Appends to the body.
     */
    public function write(string $chunk): self
    {
        if ($this->file !== null || $this->parts !== null) {
            throw new \LogicException('the body of this response is ' . ($this->file !== null ? 'a file' : 'streamed'));
        }
        $this->body .= $chunk;

        return $this;
    }

    /**
     * The answer context of docs/protocol.md: {"status":200,"headers":{"Name":["v"]}}, plus
     * "reason" and "raw_headers" when needed.
     */
    public function context(): string
    {
        if ($this->preset !== null) {
            // Most answers are a helper's response untouched: the same few contexts,
            // so they are encoded once per status and type, not once per request.
            return self::$presetContexts[$this->status][$this->preset] ??= $this->encodeContext();
        }

        return $this->encodeContext();
    }

    /**
     * A value that is not UTF-8 cannot be a JSON string: it travels base64-encoded under
     * "raw_headers" instead, and the server merges both maps (docs/protocol.md).
     */
    private function encodeContext(): string
    {
        $context = ['status' => $this->status];
        if ($this->reason !== '' && $this->reason !== Status::reason($this->status)) {
            $context['reason'] = $this->reason;
        }
        $context['headers'] = $this->headers === [] ? new \stdClass() : $this->headers;
        if ($this->file !== null) {
            $context['file'] = $this->file;
        }
        $json = json_encode($context, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        if ($json !== false) {
            return $json;
        }
        $text = $raw = [];
        foreach ($this->headers as $name => $values) {
            foreach ($values as $value) {
                if (preg_match('//u', $value) === 1) {
                    $text[$name][] = $value;
                } else {
                    $raw[$name][] = base64_encode($value);
                }
            }
        }
        $context['headers'] = $text === [] ? new \stdClass() : $text;
        if ($raw !== []) {
            $context['raw_headers'] = $raw;
        }

        // The phrase has no byte-exact channel; invalid sequences in it become U+FFFD.
        return json_encode($context, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR);
    }
}
