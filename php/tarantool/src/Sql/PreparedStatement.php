<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Sql;

use Ferry\Tarantool\Client;
use Ferry\Tarantool\Exception\ServerException;

/**
 * A statement prepared on the server (IPROTO_PREPARE). Statement ids belong to the session
 * that prepared them, so after a reconnect (or failover) the first execute() finds the id
 * unknown, prepares the text again and retries once.
 */
final class PreparedStatement
{
    /** Tarantool's ER_WRONG_QUERY_ID: "Prepared statement with id %u does not exist". */
    public const ER_WRONG_QUERY_ID = 211;

    private bool $closed = false;

    /**
     * @param list<array{name: string, type: string}> $params
     * @param list<array{name: string, type: string}> $columns
     */
    public function __construct(
        private readonly Client $client,
        private int $id,
        public readonly string $sql,
        public readonly int $bindCount,
        public readonly array $params,
        public readonly array $columns,
    ) {
    }

    public function id(): int
    {
        return $this->id;
    }

    /** @param array<int|string, mixed> $binds positional list or named ['name' => value] */
    public function execute(array $binds = []): SqlResult
    {
        if ($this->closed) {
            throw new \LogicException(\sprintf('Prepared statement #%d was closed: %s', $this->id, $this->sql));
        }
        try {
            return $this->client->executePrepared($this->id, $binds, $this->sql);
        } catch (ServerException $e) {
            if ($e->getCode() !== self::ER_WRONG_QUERY_ID) {
                throw $e;
            }
            $this->id = $this->client->prepare($this->sql)->id();
            return $this->client->executePrepared($this->id, $binds, $this->sql);
        }
    }

    /** Deallocates the statement on the server (unprepare). */
    public function close(): void
    {
        if (!$this->closed) {
            $this->closed = true;
            $this->client->unprepare($this->id);
        }
    }
}
