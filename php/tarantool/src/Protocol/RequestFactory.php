<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

use Ferry\Tarantool\IteratorType;
use Ferry\Tarantool\Operations;

/** Builds the Request for each public operation; shared by Client and AsyncClient. */
final class RequestFactory
{
    public const NO_LIMIT = 0xFFFFFFFF;

    public static function ping(): Request
    {
        return new Request(Iproto::PING, []);
    }

    public static function select(int|string $space, mixed $key, int|string $index, int $limit, int $offset, int|string $iterator): Request
    {
        if (!\is_int($iterator) || $iterator < 0 || $iterator > 11) {
            $iterator = IteratorType::of($iterator);
        }
        if ($limit < 0 || $offset < 0) {
            throw new \InvalidArgumentException(\sprintf('select(): limit and offset must be >= 0, got %d and %d', $limit, $offset));
        }
        return new Request(Iproto::SELECT, [
            Iproto::SPACE_ID => $space,
            Iproto::INDEX_ID => $index,
            Iproto::LIMIT => $limit > self::NO_LIMIT ? self::NO_LIMIT : $limit,
            Iproto::OFFSET => $offset,
            Iproto::ITERATOR => $iterator,
            Iproto::KEY => \is_array($key) ? \array_values($key) : [$key],
        ]);
    }

    /** @param list<mixed> $tuple */
    public static function insert(int|string $space, array $tuple, bool $replace = false): Request
    {
        return new Request($replace ? Iproto::REPLACE : Iproto::INSERT, [
            Iproto::SPACE_ID => $space,
            Iproto::TUPLE => $tuple,
        ]);
    }

    /** @param Operations|list<list<mixed>> $ops */
    public static function update(int|string $space, mixed $key, Operations|array $ops, int|string $index): Request
    {
        return new Request(Iproto::UPDATE, [
            Iproto::SPACE_ID => $space,
            Iproto::INDEX_ID => $index,
            Iproto::INDEX_BASE => 1,
            Iproto::KEY => \is_array($key) ? \array_values($key) : [$key],
            Iproto::TUPLE => Operations::from($ops)->toArray(),
        ]);
    }

    /**
     * @param list<mixed> $tuple
     * @param Operations|list<list<mixed>> $ops
     */
    public static function upsert(int|string $space, array $tuple, Operations|array $ops): Request
    {
        return new Request(Iproto::UPSERT, [
            Iproto::SPACE_ID => $space,
            Iproto::INDEX_BASE => 1,
            Iproto::TUPLE => $tuple,
            Iproto::OPS => Operations::from($ops)->toArray(),
        ]);
    }

    public static function delete(int|string $space, mixed $key, int|string $index): Request
    {
        return new Request(Iproto::DELETE, [
            Iproto::SPACE_ID => $space,
            Iproto::INDEX_ID => $index,
            Iproto::KEY => \is_array($key) ? \array_values($key) : [$key],
        ]);
    }

    /** @param list<mixed> $args */
    public static function call(string $function, array $args, ?\Closure $onPush, bool $idempotent = false): Request
    {
        if ($function === '') {
            throw new \InvalidArgumentException('call(): empty function name');
        }
        return new Request(Iproto::CALL, [
            Iproto::FUNCTION_NAME => $function,
            Iproto::TUPLE => \array_values($args),
        ], $onPush, null, $idempotent);
    }

    /** @param list<mixed> $args */
    public static function evaluate(string $expr, array $args, ?\Closure $onPush, bool $idempotent = false): Request
    {
        return new Request(Iproto::EVAL, [
            Iproto::EXPR => $expr,
            Iproto::TUPLE => \array_values($args),
        ], $onPush, null, $idempotent);
    }

    /** @param array<int|string, mixed> $binds */
    public static function execute(string $sql, array $binds): Request
    {
        return new Request(Iproto::EXECUTE, [
            Iproto::SQL_TEXT => $sql,
            Iproto::SQL_BIND => self::binds($binds),
            Iproto::OPTIONS => [],
        ]);
    }

    /** @param array<int|string, mixed> $binds */
    public static function executePrepared(int $statementId, array $binds, ?string $sql): Request
    {
        return new Request(Iproto::EXECUTE, [
            Iproto::STMT_ID => $statementId,
            Iproto::SQL_BIND => self::binds($binds),
            Iproto::OPTIONS => [],
        ], null, $sql);
    }

    public static function prepare(string $sql): Request
    {
        return new Request(Iproto::PREPARE, [Iproto::SQL_TEXT => $sql]);
    }

    public static function unprepare(int $statementId): Request
    {
        return new Request(Iproto::PREPARE, [Iproto::STMT_ID => $statementId]);
    }

    /**
     * Positional values stay a list; string keys become named parameters, each sent as a
     * one-entry map {":name": value} (a missing ':', '@' or '$' prefix gets ':').
     * @param array<int|string, mixed> $binds
     * @return list<mixed>
     */
    public static function binds(array $binds): array
    {
        if (\array_is_list($binds)) {
            return $binds;
        }
        $out = [];
        foreach ($binds as $name => $value) {
            if (\is_int($name)) {
                $out[] = $value;
                continue;
            }
            if ($name === '') {
                throw new \InvalidArgumentException('SQL bind with an empty parameter name');
            }
            $out[] = [(\strpbrk($name[0], ':@$') === false ? ':' : '') . $name => $value];
        }
        return $out;
    }
}
