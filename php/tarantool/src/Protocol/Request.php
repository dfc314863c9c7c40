<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

/**
 * One IPROTO request before encoding. The body is keyed by IPROTO body keys; SPACE_ID and
 * INDEX_ID may still be names, resolved per connection (each instance has its own schema
 * cache), so middleware sees what the caller asked for.
 */
final class Request
{
    /**
     * @param array<int, mixed> $body
     * @param \Closure(mixed, int): void|null $onPush receives IPROTO_CHUNK (box.session.push) data
     * @param string|null $sql text of a prepared statement executed by id (for logs and the firewall)
     * @param bool $idempotent the caller declares that executing it twice does no harm, so it may
     *   be replayed after a failure that left its outcome unknown (see isIdempotent())
     * @param float|null $timeout seconds from sending to the complete reply, instead of the
     *   connection's read_timeout
     */
    public function __construct(
        public readonly int $type,
        public readonly array $body,
        public readonly ?\Closure $onPush = null,
        public readonly ?string $sql = null,
        public readonly bool $idempotent = false,
        public readonly ?float $timeout = null,
    ) {
        if ($timeout !== null && !($timeout > 0)) {
            throw new \InvalidArgumentException(\sprintf('Request timeout must be a positive number of seconds, got %s', \var_export($timeout, true)));
        }
    }

    /** A copy with a per-call timeout and/or the idempotent declaration (null keeps the current value). */
    public function with(?float $timeout = null, ?bool $idempotent = null): self
    {
        if (($timeout === null || $timeout === $this->timeout) && ($idempotent === null || $idempotent === $this->idempotent)) {
            return $this;
        }
        return new self($this->type, $this->body, $this->onPush, $this->sql, $idempotent ?? $this->idempotent, $timeout ?? $this->timeout);
    }

    /**
     * Whether the request may be replayed when it may already have reached the server (its
     * outcome is unknown): read-only requests, and anything the caller declared idempotent.
     * INSERT, UPDATE, CALL, EVAL... are not, unless declared: applying them twice could
     * duplicate a write.
     */
    public function isIdempotent(): bool
    {
        return $this->idempotent || $this->isReadOnly();
    }

    public function typeName(): string
    {
        return Iproto::TYPE_NAMES[$this->type] ?? ('type ' . $this->type);
    }

    public function usesNames(): bool
    {
        return \is_string($this->body[Iproto::SPACE_ID] ?? null) || \is_string($this->body[Iproto::INDEX_ID] ?? null);
    }

    /**
     * Whether the request certainly changes no data. CALL and EVAL run arbitrary code and are
     * never considered read-only; SQL is judged by its first keyword.
     */
    public function isReadOnly(): bool
    {
        switch ($this->type) {
            case Iproto::SELECT:
            case Iproto::PING:
            case Iproto::AUTH:
                return true;
            case Iproto::EXECUTE:
            case Iproto::PREPARE:
                $sql = $this->body[Iproto::SQL_TEXT] ?? $this->sql;
                if ($sql === null) {
                    // PREPARE with only a statement id is an unprepare; EXECUTE by bare id is unknown.
                    return $this->type === Iproto::PREPARE;
                }
                return self::isReadOnlySql((string) $sql);
            default:
                return false;
        }
    }

    public static function isReadOnlySql(string $sql): bool
    {
        // Strip leading comments and whitespace, then look at the first keyword.
        $s = \ltrim((string) \preg_replace('~^(\s*(--[^\n]*\n|/\*.*?\*/))*~s', '', $sql));
        if (!\preg_match('~^([A-Za-z]+)~', $s, $m)) {
            return false;
        }
        $kw = \strtoupper($m[1]);
        if ($kw === 'WITH') {
            // A CTE can wrap a DML statement in some dialects; be conservative.
            return !\preg_match('~\b(INSERT|UPDATE|DELETE|REPLACE)\b~i', $s);
        }
        return \in_array($kw, ['SELECT', 'VALUES', 'EXPLAIN', 'SHOW'], true);
    }

    /** Short human-readable form for logs and exception messages. */
    public function describe(): string
    {
        $b = $this->body;
        $d = $this->typeName();
        if (isset($b[Iproto::SPACE_ID])) {
            $d .= ' space=' . $b[Iproto::SPACE_ID];
        }
        if (isset($b[Iproto::INDEX_ID]) && $b[Iproto::INDEX_ID] !== 0) {
            $d .= ' index=' . $b[Iproto::INDEX_ID];
        }
        if (isset($b[Iproto::FUNCTION_NAME])) {
            $d .= ' ' . $b[Iproto::FUNCTION_NAME];
        }
        if (isset($b[Iproto::EXPR])) {
            $d .= ' ' . self::clip((string) $b[Iproto::EXPR]);
        }
        if (isset($b[Iproto::SQL_TEXT])) {
            $d .= ' ' . self::clip((string) $b[Iproto::SQL_TEXT]);
        }
        if (isset($b[Iproto::STMT_ID])) {
            $d .= ' stmt=' . $b[Iproto::STMT_ID] . ($this->sql !== null ? ' ' . self::clip($this->sql) : '');
        }
        return $d;
    }

    private static function clip(string $s): string
    {
        $s = (string) \preg_replace('~\s+~', ' ', $s);
        return \strlen($s) > 80 ? \substr($s, 0, 77) . '...' : $s;
    }
}
