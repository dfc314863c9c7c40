<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

use Ferry\Tarantool\Codec\Codec;
use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Middleware\Middleware;
use Ferry\Tarantool\Middleware\MiddlewareHandler;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\RequestFactory as R;
use Ferry\Tarantool\Protocol\Response;
use Ferry\Tarantool\Sql\PreparedStatement;
use Ferry\Tarantool\Sql\SqlResult;

/**
 * Synchronous-looking Tarantool API. Inside a Fiber while the event loop runs, each call
 * suspends only the calling Fiber; elsewhere it blocks. Spaces and indexes are given by id
 * or by name. async() gives the same operations returning futures.
 */
final class Client
{
    private ?AsyncClient $async = null;
    /** The Connection or ReplicaSet at the end of the middleware chain. */
    private readonly Handler $terminal;
    /** The handler itself when it is a bare Connection: selects by id may take its fast path. */
    private readonly ?Connection $direct;
    /** Stamped on every request of this client view (see with()). */
    private ?float $timeout = null;
    private bool $idempotent = false;

    public function __construct(private readonly Handler $handler, ?Handler $terminal = null)
    {
        $this->terminal = $terminal ?? $handler;
        $this->direct = $handler instanceof Connection ? $handler : null;
    }

    /**
     * @param array<string, mixed> $options connection options (see Connection\Options) plus
     *   'codec' => Codec, 'middleware' => list<Middleware>, 'on_push' => Closure(mixed $data, int $sync)
     */
    public static function connect(string $uri, array $options = []): self
    {
        $codec = $options['codec'] ?? null;
        $middleware = $options['middleware'] ?? [];
        $onPush = $options['on_push'] ?? null;
        unset($options['codec'], $options['middleware'], $options['on_push']);
        if ($codec !== null && !$codec instanceof Codec) {
            throw new \InvalidArgumentException('Option codec must implement ' . Codec::class);
        }
        $client = new self(new Connection($uri, $options, $codec, $onPush));
        return $middleware === [] ? $client : $client->withMiddleware(...$middleware);
    }

    /**
     * A client over several instances (see ReplicaSet): failover, writes to the read-write
     * instance, optionally reads from replicas ('read_from_replicas' => true).
     * @param list<string> $uris
     * @param array<string, mixed> $options as for connect(), plus 'read_from_replicas' and 'down_for'
     */
    public static function replicaSet(array $uris, array $options = []): self
    {
        $codec = $options['codec'] ?? null;
        $middleware = $options['middleware'] ?? [];
        unset($options['codec'], $options['middleware']);
        $client = new self(new ReplicaSet($uris, $options, $codec));
        return $middleware === [] ? $client : $client->withMiddleware(...$middleware);
    }

    /** A client whose requests pass through $middleware (first listed runs first). */
    public function withMiddleware(Middleware ...$middleware): self
    {
        return new self(MiddlewareHandler::wrap($this->handler, ...$middleware), $this->terminal);
    }

    /** The handler requests go to: the middleware chain, or the Connection / ReplicaSet itself. */
    public function handler(): Handler
    {
        return $this->handler;
    }

    /** The Connection or ReplicaSet behind any middleware. */
    public function terminal(): Handler
    {
        return $this->terminal;
    }

    /** Closes the connection(s); requests in flight fail, the next request reconnects. */
    public function close(): void
    {
        if ($this->terminal instanceof Connection || $this->terminal instanceof ReplicaSet) {
            $this->terminal->close();
        }
    }

    public function async(): AsyncClient
    {
        return $this->async ??= new AsyncClient($this->handler, $this->timeout, $this->idempotent);
    }

    /**
     * A view of this client (same connection, middleware and schema cache) whose requests carry
     * a timeout and/or the idempotent declaration:
     *
     *     $client->with(timeout: 30.0)->call('nightly_report');       // instead of read_timeout
     *     $client->with(idempotent: true)->replace('users', $tuple);  // safe to replay
     *
     * $timeout: seconds from sending a request to its complete reply (connect and schema
     * lookups keep their own limits). $idempotent: executing the request twice is harmless,
     * so retry and failover may replay it even when it may already have reached the server.
     * Null keeps this client's current setting.
     */
    public function with(?float $timeout = null, ?bool $idempotent = null): self
    {
        if ($timeout !== null && !($timeout > 0)) {
            throw new \InvalidArgumentException(\sprintf('with(): timeout must be a positive number of seconds, got %s', \var_export($timeout, true)));
        }
        $view = clone $this;
        $view->timeout = $timeout ?? $this->timeout;
        $view->idempotent = $idempotent ?? $this->idempotent;
        $view->async = null;
        return $view;
    }

    private function run(Request $request): Response
    {
        if ($this->timeout !== null || $this->idempotent) {
            $request = $request->with($this->timeout, $this->idempotent ?: null);
        }
        return $this->handler->handle($request);
    }

    public function ping(): void
    {
        $this->run(R::ping());
    }

    /**
     * @param mixed $key a key part, or a list of key parts ([] with ALL/EQ: every tuple)
     * @return list<list<mixed>> tuples
     */
    public function select(
        int|string $space,
        mixed $key = [],
        int|string $index = 0,
        int $limit = R::NO_LIMIT,
        int $offset = 0,
        int|string $iterator = IteratorType::EQ,
    ): array {
        if ($this->direct !== null && $this->timeout === null && \is_int($space) && \is_int($index) && \is_int($iterator) && $limit >= 0 && $limit <= R::NO_LIMIT && $offset >= 0) {
            return $this->direct->select($space, $index, $limit, $offset, $iterator, \is_array($key) ? \array_values($key) : [$key]);
        }
        return $this->run(R::select($space, $key, $index, $limit, $offset, $iterator))->body[Iproto::DATA] ?? [];
    }

    /** @param list<mixed> $tuple @return list<mixed> the inserted tuple */
    public function insert(int|string $space, array $tuple): array
    {
        return $this->run(R::insert($space, $tuple))->body[Iproto::DATA][0] ?? [];
    }

    /** @param list<mixed> $tuple @return list<mixed> the stored tuple */
    public function replace(int|string $space, array $tuple): array
    {
        return $this->run(R::insert($space, $tuple, true))->body[Iproto::DATA][0] ?? [];
    }

    /**
     * @param Operations|list<list<mixed>> $operations
     * @return list<mixed>|null the updated tuple, null if no tuple matched
     */
    public function update(int|string $space, mixed $key, Operations|array $operations, int|string $index = 0): ?array
    {
        return $this->run(R::update($space, $key, $operations, $index))->body[Iproto::DATA][0] ?? null;
    }

    /**
     * Inserts $tuple, or applies $operations to the existing tuple with the same primary key.
     * @param list<mixed> $tuple
     * @param Operations|list<list<mixed>> $operations
     */
    public function upsert(int|string $space, array $tuple, Operations|array $operations): void
    {
        $this->run(R::upsert($space, $tuple, $operations));
    }

    /** @return list<mixed>|null the deleted tuple, null if none matched */
    public function delete(int|string $space, mixed $key, int|string $index = 0): ?array
    {
        return $this->run(R::delete($space, $key, $index))->body[Iproto::DATA][0] ?? null;
    }

    /**
     * Calls a stored or global Lua function (IPROTO_CALL, multi-return).
     * @param list<mixed> $args
     * @param \Closure(mixed, int): void|null $onPush receives box.session.push() data sent before the reply
     * @param bool $idempotent declares that calling it twice does no harm: retry and failover
     *   may then replay it when a broken connection leaves its outcome unknown
     * @return list<mixed> the function's return values
     */
    public function call(string $function, array $args = [], ?\Closure $onPush = null, bool $idempotent = false): array
    {
        return $this->run(R::call($function, $args, $onPush, $idempotent))->body[Iproto::DATA] ?? [];
    }

    /**
     * Runs a Lua chunk; arguments are available as `...`.
     * @param list<mixed> $args
     * @return list<mixed> the chunk's return values
     */
    public function evaluate(string $expr, array $args = [], ?\Closure $onPush = null, bool $idempotent = false): array
    {
        return $this->run(R::evaluate($expr, $args, $onPush, $idempotent))->body[Iproto::DATA] ?? [];
    }

    /** @param array<int|string, mixed> $binds positional list or named ['name' => value] */
    public function execute(string $sql, array $binds = []): SqlResult
    {
        return SqlResult::fromBody($this->run(R::execute($sql, $binds))->body);
    }

    public function prepare(string $sql): PreparedStatement
    {
        $body = $this->run(R::prepare($sql))->body;
        $columns = static fn (array $fields): array => \array_map(
            static fn ($f) => ['name' => (string) ($f[Iproto::FIELD_NAME] ?? ''), 'type' => (string) ($f[Iproto::FIELD_TYPE] ?? '')],
            $fields,
        );
        return new PreparedStatement(
            $this,
            (int) ($body[Iproto::STMT_ID] ?? 0),
            $sql,
            (int) ($body[Iproto::BIND_COUNT] ?? 0),
            $columns($body[Iproto::BIND_METADATA] ?? []),
            $columns($body[Iproto::METADATA] ?? []),
        );
    }

    /** @param array<int|string, mixed> $binds */
    public function executePrepared(int $statementId, array $binds = [], ?string $sql = null): SqlResult
    {
        return SqlResult::fromBody($this->run(R::executePrepared($statementId, $binds, $sql))->body);
    }

    public function unprepare(int $statementId): void
    {
        $this->run(R::unprepare($statementId));
    }
}
