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
     */
    public function __construct(
        public readonly int $type,
        public readonly array $body,
        public readonly ?\Closure $onPush = null,
        public readonly ?string $sql = null,
    ) {
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
