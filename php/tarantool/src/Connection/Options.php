<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

/**
 * Where and how to connect. URI forms: tcp://[user[:password]@]host:port, host:port,
 * unix://[user[:password]@]/path/to.sock, /path/to.sock; query parameters may carry the
 * options below (?connect_timeout=1&persistent=1).
 */
final class Options
{
    public const DEFAULTS = [
        'connect_timeout' => 5.0,   // seconds for TCP connect + greeting + auth
        'read_timeout' => 10.0,     // seconds a request may wait for its reply
        'write_timeout' => 10.0,    // seconds a blocked write may wait
        'persistent' => false,      // reuse sockets across PHP requests (FPM)
        'tcp_nodelay' => true,
        'user' => null,
        'password' => null,
    ];

    public readonly string $address;       // passed to stream_socket_client (no credentials)
    public readonly string $display;       // for messages and logs (no password)
    public readonly bool $unix;
    public readonly ?string $user;
    public readonly string $password;
    public readonly float $connectTimeout;
    public readonly float $readTimeout;
    public readonly float $writeTimeout;
    public readonly bool $persistent;
    public readonly bool $tcpNoDelay;

    /** @param array<string, mixed> $options */
    public function __construct(string $uri, array $options = [])
    {
        [$address, $unix, $user, $password, $query] = self::parseUri($uri);
        $unknown = \array_diff_key($options + $query, self::DEFAULTS);
        if ($unknown !== []) {
            throw new \InvalidArgumentException(\sprintf(
                'Unknown connection option(s) %s for %s; known: %s',
                \implode(', ', \array_keys($unknown)),
                $address,
                \implode(', ', \array_keys(self::DEFAULTS)),
            ));
        }
        $o = $options + $query + self::DEFAULTS;
        $this->address = $address;
        $this->unix = $unix;
        $this->user = $o['user'] ?? $user;
        $this->password = (string) ($o['password'] ?? $password ?? '');
        $this->connectTimeout = self::seconds($o['connect_timeout'], 'connect_timeout');
        $this->readTimeout = self::seconds($o['read_timeout'], 'read_timeout');
        $this->writeTimeout = self::seconds($o['write_timeout'], 'write_timeout');
        $this->persistent = \filter_var($o['persistent'], \FILTER_VALIDATE_BOOL);
        $this->tcpNoDelay = \filter_var($o['tcp_nodelay'], \FILTER_VALIDATE_BOOL);
        $this->display = ($this->user !== null ? $this->user . '@' : '') . $address;
    }

    /** Guest needs no AUTH; so does a user-less URI. */
    public function needsAuth(): bool
    {
        return $this->user !== null && $this->user !== 'guest';
    }

    /**
     * PHP keys persistent sockets by the address string only; a suffix after the port (which
     * PHP's port parser ignores) keeps sessions authenticated as different users apart.
     */
    public function persistentAddress(): string
    {
        if ($this->unix) {
            return $this->address;
        }
        return $this->address . '/' . \substr(\sha1((string) $this->user . "\0" . $this->password), 0, 12);
    }

    /** @return array{string, bool, ?string, ?string, array<string, string>} */
    private static function parseUri(string $uri): array
    {
        $uri = \trim($uri);
        if ($uri === '') {
            throw new \InvalidArgumentException('Empty Tarantool URI');
        }
        if ($uri[0] === '/') {
            $uri = 'unix://' . $uri;
        } elseif (!\str_contains($uri, '://')) {
            $uri = 'tcp://' . $uri;
        }
        [$scheme, $rest] = \explode('://', $uri, 2);
        $scheme = \strtolower($scheme);
        if ($scheme !== 'tcp' && $scheme !== 'unix') {
            throw new \InvalidArgumentException(\sprintf('Unsupported scheme "%s" in Tarantool URI (use tcp:// or unix://)', $scheme));
        }
        $query = [];
        if (($q = \strpos($rest, '?')) !== false) {
            \parse_str(\substr($rest, $q + 1), $query);
            $rest = \substr($rest, 0, $q);
        }
        $user = $password = null;
        if (($at = \strrpos($rest, '@')) !== false) {
            $cred = \substr($rest, 0, $at);
            $rest = \substr($rest, $at + 1);
            [$user, $password] = \array_pad(\explode(':', $cred, 2), 2, null);
            $user = \rawurldecode($user);
            $password = $password === null ? null : \rawurldecode($password);
        }
        if ($scheme === 'unix') {
            if ($rest === '' || $rest[0] !== '/') {
                throw new \InvalidArgumentException(\sprintf('unix:// URI needs an absolute socket path, got "%s"', $rest));
            }
            return ['unix://' . $rest, true, $user, $password, $query];
        }
        if (!\preg_match('~^(\[[0-9a-fA-F:.]+\]|[^:/\[\]]+):(\d{1,5})$~', $rest, $m) || (int) $m[2] > 65535) {
            throw new \InvalidArgumentException(\sprintf('tcp:// URI needs host:port, got "%s"', $rest));
        }
        return ['tcp://' . $m[1] . ':' . $m[2], false, $user, $password, $query];
    }

    private static function seconds(mixed $v, string $name): float
    {
        if (!\is_numeric($v) || (float) $v <= 0) {
            throw new \InvalidArgumentException(\sprintf('Option %s must be a positive number of seconds, got %s', $name, \var_export($v, true)));
        }
        return (float) $v;
    }
}
