<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

use Ferry\Tarantool\Client;

/**
 * The benchmarked operations. Each is one request: fn(Client $c, int $seq). Keys are random
 * in 1..10,000, except for deletes, which walk a fixed permutation so each deletes a tuple
 * that exists (the space is refilled to its 10,000 tuples, untimed, before every iteration).
 */
final class Ops
{
    /** @var list<int> */
    public static array $permutation = [];

    /** @return array<string, \Closure(Client, int): void> */
    public static function all(): array
    {
        if (self::$permutation === []) {
            \mt_srand(42);
            self::$permutation = \range(1, Server::TUPLES);
            \shuffle(self::$permutation);
            \mt_srand();
        }
        $id = Server::SPACE_ID;
        $n = Server::TUPLES;
        return [
            'ping' => static function (Client $c): void {
                $c->ping();
            },
            'select' => static function (Client $c) use ($id, $n): void {
                $c->select($id, [\mt_rand(1, $n)]);
            },
            'insert' => static function (Client $c) use ($id): void {
                $c->insert($id, [null, 'tuple_new']); // the sequence assigns the id
            },
            'replace' => static function (Client $c) use ($id, $n): void {
                $k = \mt_rand(1, $n);
                $c->replace($id, [$k, 'tuple_' . $k]);
            },
            'update' => static function (Client $c) use ($id, $n): void {
                $c->update($id, [\mt_rand(1, $n)], [['=', 2, 'tuple_upd']]);
            },
            'upsert' => static function (Client $c) use ($id, $n): void {
                $k = \mt_rand(1, $n);
                $c->upsert($id, [$k, 'tuple_' . $k], [['=', 2, 'tuple_ups']]);
            },
            'delete' => static function (Client $c, int $seq) use ($id): void {
                $c->delete($id, [self::$permutation[$seq % Server::TUPLES]]);
            },
            'call' => static function (Client $c): void {
                $c->call('bench_func');
            },
            'evaluate' => static function (Client $c): void {
                $c->evaluate('return true');
            },
            'sql_select' => static function (Client $c) use ($n): void {
                $c->execute('SELECT * FROM "bench" WHERE "id" = ?', [\mt_rand(1, $n)]);
            },
            'sql_insert' => static function (Client $c): void {
                $c->execute('INSERT INTO "bench" VALUES (NULL, ?)', ['tuple_sql']);
            },
            'sql_update' => static function (Client $c) use ($n): void {
                $c->execute('UPDATE "bench" SET "name" = ? WHERE "id" = ?', ['tuple_sqlupd', \mt_rand(1, $n)]);
            },
            'sql_delete' => static function (Client $c, int $seq): void {
                $c->execute('DELETE FROM "bench" WHERE "id" = ?', [self::$permutation[$seq % Server::TUPLES]]);
            },
        ];
    }
}
