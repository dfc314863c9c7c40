<?php

declare(strict_types=1);

namespace Framework;

/**
 * A deterministic in-memory table source standing in for a database, so the benchmark
 * measures the framework and not a server round trip.
 */
final class Database
{
    /** @return list<array{id: int, name: string, price: int, stock: int, tags: list<string>}> */
    public function select(string $table, int $offset, int $limit): array
    {
        $rows = [];
        $seed = crc32($table);
        for ($id = $offset + 1; $id <= $offset + $limit; ++$id) {
            $h = ($seed ^ ($id * 2654435761)) & 0x7fffffff;
            $rows[] = [
                'id' => $id,
                'name' => ucfirst($table) . ' item #' . $id,
                'price' => $h % 100000,
                'stock' => $h % 97,
                'tags' => ['t' . ($h % 7), 't' . ($h % 11), 't' . ($h % 13)],
            ];
        }

        return $rows;
    }
}
