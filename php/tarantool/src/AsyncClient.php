<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\RequestFactory as R;
use Ferry\Tarantool\Protocol\Response;
use Ferry\Tarantool\Sql\SqlResult;

/**
 * The Client operations, returning futures at once. Straight to a Connection (by numeric ids)
 * a request costs one future and is pipelined with the others; through middleware, a replica
 * set or by names, each request runs in a Fiber of its own.
 */
final class AsyncClient
{
    private static ?\Closure $data = null;
    private static ?\Closure $first = null;
    private static ?\Closure $firstOrNull = null;

    /** @param float|null $timeout, $idempotent stamped on every request (see Client::with()) */
    public function __construct(
        private readonly Handler $handler,
        private readonly ?float $timeout = null,
        private readonly bool $idempotent = false,
    ) {
        self::$data ??= static fn (Response $r) => $r->body[Iproto::DATA] ?? [];
        self::$first ??= static fn (Response $r) => $r->body[Iproto::DATA][0] ?? [];
        self::$firstOrNull ??= static fn (Response $r) => $r->body[Iproto::DATA][0] ?? null;
    }

    /** @return Future<null> */
    public function ping(): Future
    {
        return $this->submit(R::ping(), static fn () => null);
    }

    /** @return Future<list<list<mixed>>> */
    public function select(int|string $space, mixed $key = [], int|string $index = 0, int $limit = R::NO_LIMIT, int $offset = 0, int|string $iterator = IteratorType::EQ): Future
    {
        return $this->submit(R::select($space, $key, $index, $limit, $offset, $iterator), self::$data);
    }

    public function insert(int|string $space, array $tuple): Future
    {
        return $this->submit(R::insert($space, $tuple), self::$first);
    }

    public function replace(int|string $space, array $tuple): Future
    {
        return $this->submit(R::insert($space, $tuple, true), self::$first);
    }

    public function update(int|string $space, mixed $key, Operations|array $operations, int|string $index = 0): Future
    {
        return $this->submit(R::update($space, $key, $operations, $index), self::$firstOrNull);
    }

    public function upsert(int|string $space, array $tuple, Operations|array $operations): Future
    {
        return $this->submit(R::upsert($space, $tuple, $operations), static fn () => null);
    }

    public function delete(int|string $space, mixed $key, int|string $index = 0): Future
    {
        return $this->submit(R::delete($space, $key, $index), self::$firstOrNull);
    }

    public function call(string $function, array $args = [], ?\Closure $onPush = null, bool $idempotent = false): Future
    {
        return $this->submit(R::call($function, $args, $onPush, $idempotent), self::$data);
    }

    public function evaluate(string $expr, array $args = [], ?\Closure $onPush = null, bool $idempotent = false): Future
    {
        return $this->submit(R::evaluate($expr, $args, $onPush, $idempotent), self::$data);
    }

    /** @return Future<SqlResult> */
    public function execute(string $sql, array $binds = []): Future
    {
        return $this->submit(R::execute($sql, $binds), static fn (Response $r) => SqlResult::fromBody($r->body));
    }

    /** Any request, resolved with the raw Response. */
    public function send(Request $request): Future
    {
        return $this->submit($request, null);
    }

    private function submit(Request $request, ?\Closure $map): Future
    {
        if ($this->timeout !== null || $this->idempotent) {
            $request = $request->with($this->timeout, $this->idempotent ?: null);
        }
        $h = $this->handler;
        $future = $h instanceof Connection ? $h->sendAsync($request) : Scheduler::spawn(static fn () => $h->handle($request));
        $future->map = $map;
        return $future;
    }
}
