<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Sql;

use Ferry\Tarantool\Protocol\Iproto;

/**
 * Result of EXECUTE. Queries give rows as associative arrays keyed by column name (from
 * IPROTO_METADATA); DML gives the affected row count and any autoincrement ids (SQL_INFO).
 * @implements \IteratorAggregate<int, array<string, mixed>>
 */
final class SqlResult implements \IteratorAggregate, \Countable
{
    /**
     * @param list<array{name: string, type: string}> $columns
     * @param list<array<string, mixed>> $rows
     * @param list<int> $autoincrementIds
     */
    public function __construct(
        public readonly array $columns,
        public readonly array $rows,
        public readonly int $rowCount,
        public readonly array $autoincrementIds,
    ) {
    }

    /** @param array<int, mixed> $body */
    public static function fromBody(array $body): self
    {
        $columns = [];
        $names = [];
        foreach ($body[Iproto::METADATA] ?? [] as $field) {
            $name = (string) ($field[Iproto::FIELD_NAME] ?? '');
            $columns[] = ['name' => $name, 'type' => (string) ($field[Iproto::FIELD_TYPE] ?? '')];
            $names[] = $name;
        }
        $rows = [];
        $width = \count($names);
        // Duplicate column names (SELECT a, a) would collapse in array_combine: keep positions then.
        $unique = \count(\array_unique($names)) === $width;
        foreach ($body[Iproto::DATA] ?? [] as $row) {
            $rows[] = $unique && \count($row) === $width ? \array_combine($names, $row) : $row;
        }
        $info = $body[Iproto::SQL_INFO] ?? [];
        return new self(
            $columns,
            $rows,
            (int) ($info[Iproto::SQL_INFO_ROW_COUNT] ?? \count($rows)),
            \array_map('intval', $info[Iproto::SQL_INFO_AUTOINCREMENT_IDS] ?? []),
        );
    }

    /** @return list<string> */
    public function columnNames(): array
    {
        return \array_column($this->columns, 'name');
    }

    /** @return array<string, mixed>|null */
    public function first(): ?array
    {
        return $this->rows[0] ?? null;
    }

    public function count(): int
    {
        return \count($this->rows);
    }

    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->rows);
    }
}
