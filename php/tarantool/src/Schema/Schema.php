<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Schema;

use Ferry\Tarantool\Exception\SchemaException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;

/**
 * Space and index names of one instance, resolved lazily through _vspace / _vindex (which
 * only list what the user may see) and cached together with the schema version they were
 * read at. That version goes out with every request that used a name, so the server refuses
 * it (ER_WRONG_SCHEMA_VERSION) if DDL changed things since; the connection then resets the
 * cache and retries once.
 */
final class Schema
{
    private const MAX_RESOLVE_ATTEMPTS = 5;

    /** @var array<string, int> */
    private array $spaces = [];
    /** @var array<int, array<string, int>> */
    private array $indexes = [];
    private int $version = 0;
    /** @var \WeakReference<Handler> weak: the connection owns its schema, not the reverse */
    private readonly \WeakReference $handler;

    public function __construct(Handler $handler)
    {
        $this->handler = \WeakReference::create($handler);
    }

    public function version(): int
    {
        return $this->version;
    }

    public function reset(): void
    {
        $this->spaces = [];
        $this->indexes = [];
        $this->version = 0;
    }

    /**
     * Replaces space and index names by ids, all read from one snapshot of the cache: if a
     * lookup meanwhile found the schema at another version (DDL happened), everything is
     * resolved again at the new version. The request must carry the returned version, so the
     * server refuses it (ER_WRONG_SCHEMA_VERSION) if the schema moved on after that snapshot.
     * @param array<int, mixed> $body
     * @return array{array<int, mixed>, int} the body with SPACE_ID / INDEX_ID as numbers, and
     *   the schema version those ids belong to
     */
    public function resolve(array $body): array
    {
        for ($attempt = 1; ; $attempt++) {
            $version = $this->version;
            $resolved = $body;
            $space = $body[Iproto::SPACE_ID] ?? null;
            if (\is_string($space)) {
                $space = $resolved[Iproto::SPACE_ID] = $this->spaceId($space);
            }
            $index = $body[Iproto::INDEX_ID] ?? null;
            if (\is_string($index)) {
                if (!\is_int($space)) {
                    throw new SchemaException(\sprintf('Index "%s" given by name but the request names no space', $index));
                }
                $resolved[Iproto::INDEX_ID] = $this->indexId($space, $index);
            }
            if ($this->version === $version) {
                return [$resolved, $version];
            }
            if ($attempt === self::MAX_RESOLVE_ATTEMPTS) {
                throw new SchemaException(\sprintf('The schema changed during each of %d attempts to resolve names', $attempt));
            }
        }
    }

    public function spaceId(string $name): int
    {
        if (isset($this->spaces[$name])) {
            return $this->spaces[$name];
        }
        $tuple = $this->lookup(Iproto::VSPACE, [$name]);
        if ($tuple === null) {
            throw new SchemaException(\sprintf('Space "%s" does not exist (or is not visible to this user)', $name));
        }
        return $this->spaces[$name] = (int) $tuple[0];
    }

    public function indexId(int $spaceId, string $name): int
    {
        if (isset($this->indexes[$spaceId][$name])) {
            return $this->indexes[$spaceId][$name];
        }
        $tuple = $this->lookup(Iproto::VINDEX, [$spaceId, $name]);
        if ($tuple === null) {
            throw new SchemaException(\sprintf('Index "%s" does not exist in space #%d', $name, $spaceId));
        }
        return $this->indexes[$spaceId][$name] = (int) $tuple[1];
    }

    /** @param list<mixed> $key @return array<int, mixed>|null */
    private function lookup(int $systemSpace, array $key): ?array
    {
        $handler = $this->handler->get() ?? throw new \LogicException('Schema used after its connection was released');
        $response = $handler->handle(new Request(Iproto::SELECT, [
            Iproto::SPACE_ID => $systemSpace,
            Iproto::INDEX_ID => 2, // "name" index of both _vspace and _vindex
            Iproto::LIMIT => 1,
            Iproto::OFFSET => 0,
            Iproto::ITERATOR => 0,
            Iproto::KEY => $key,
        ]));
        if ($response->schemaVersion !== $this->version) {
            // Names cached at another version may be stale; start over at this one.
            $this->spaces = [];
            $this->indexes = [];
            $this->version = $response->schemaVersion;
        }
        return $response->data()[0] ?? null;
    }
}
