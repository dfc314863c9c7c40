<?php

declare(strict_types=1);

namespace Ferry\Worker\Testing;

/**
 * A small HTTP/1.0 client with a cookie jar, enough for end-to-end tests without ext-curl.
 * One instance is one user: cookies set by responses are sent back on later requests.
 */
final class HttpClient
{
    /** @var array<string, string> */
    public array $cookies = [];

    public function __construct(private readonly string $baseUrl, private readonly float $timeout = 30.0)
    {
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, list<string>>, body: string}
     */
    public function request(string $method, string $path, array $headers = [], string $body = ''): array
    {
        if ($this->cookies !== [] && !isset($headers['Cookie'])) {
            $pairs = [];
            foreach ($this->cookies as $k => $v) {
                $pairs[] = $k . '=' . $v;
            }
            $headers['Cookie'] = \implode('; ', $pairs);
        }
        $lines = [];
        foreach ($headers as $k => $v) {
            $lines[] = $k . ': ' . $v;
        }
        $ctx = \stream_context_create(['http' => [
            'method' => $method,
            'header' => \implode("\r\n", $lines),
            'content' => $body,
            'ignore_errors' => true,
            'follow_location' => 0,
            'timeout' => $this->timeout,
            'protocol_version' => 1.0,
        ]]);
        $http_response_header = [];
        $got = @\file_get_contents($this->baseUrl . $path, false, $ctx);
        if ($got === false || $http_response_header === []) {
            throw new \RuntimeException("$method $path: " . (\error_get_last()['message'] ?? 'no response'));
        }
        \preg_match('#^HTTP/\S+ (\d{3})#', $http_response_header[0], $m);
        $out = ['status' => (int) $m[1], 'headers' => [], 'body' => $got];
        foreach (\array_slice($http_response_header, 1) as $line) {
            [$k, $v] = \array_map('trim', \explode(':', $line, 2)) + [1 => ''];
            $out['headers'][\strtolower($k)][] = $v;
            if (\strtolower($k) === 'set-cookie') {
                $this->remember($v);
            }
        }
        return $out;
    }

    public function get(string $path, array $headers = []): array
    {
        return $this->request('GET', $path, $headers);
    }

    /** @param array<string, string> $fields */
    public function postForm(string $path, array $fields, array $headers = []): array
    {
        $headers['Content-Type'] = 'application/x-www-form-urlencoded';
        return $this->request('POST', $path, $headers, \http_build_query($fields));
    }

    /**
     * @param array<string, string> $fields
     * @param array<string, array{filename: string, content: string, type?: string}> $files
     */
    public function postMultipart(string $path, array $fields, array $files, array $headers = []): array
    {
        $b = 'ferry' . \bin2hex(\random_bytes(8));
        $body = '';
        foreach ($fields as $k => $v) {
            $body .= "--$b\r\nContent-Disposition: form-data; name=\"$k\"\r\n\r\n$v\r\n";
        }
        foreach ($files as $k => $f) {
            $type = $f['type'] ?? 'application/octet-stream';
            $body .= "--$b\r\nContent-Disposition: form-data; name=\"$k\"; filename=\"{$f['filename']}\"\r\n"
                . "Content-Type: $type\r\n\r\n{$f['content']}\r\n";
        }
        $body .= "--$b--\r\n";
        $headers['Content-Type'] = "multipart/form-data; boundary=$b";
        return $this->request('POST', $path, $headers, $body);
    }

    private function remember(string $setCookie): void
    {
        [$pair] = \explode(';', $setCookie, 2);
        [$name, $value] = \explode('=', $pair, 2) + [1 => ''];
        $name = \trim($name);
        $expired = \preg_match('/;\s*expires=([^;]+)/i', $setCookie, $m) && \strtotime($m[1]) < \time();
        if ($value === '' || $value === 'deleted' || $expired || \preg_match('/;\s*max-age=(0|-\d+)/i', $setCookie)) {
            unset($this->cookies[$name]);
        } else {
            $this->cookies[$name] = $value;
        }
    }
}
