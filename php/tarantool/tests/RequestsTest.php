<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Client;
use Ferry\Tarantool\IteratorType;
use Ferry\Tarantool\Operations;

/** Every box request type against a real instance. */
final class RequestsTest extends TarantoolTestCase
{
    private Client $c;

    protected function setUp(): void
    {
        $this->c = $this->client();
        $this->c->evaluate("box.space.users:truncate() box.space.bits:truncate() box.sequence.users_seq:reset()");
    }

    public function testPing(): void
    {
        $this->c->ping();
        $this->assertSame([true], $this->c->evaluate('return true'));
    }

    public function testInsertAndSelectByIdAndName(): void
    {
        $this->assertSame([1, 'alice', 10, null], $this->c->insert('users', [1, 'alice', 10, null]));
        $spaceId = $this->c->evaluate('return box.space.users.id')[0];
        $this->assertSame([[1, 'alice', 10, null]], $this->c->select($spaceId, [1]));
        $this->assertSame([[1, 'alice', 10, null]], $this->c->select('users', 1));
        $this->assertSame([[1, 'alice', 10, null]], $this->c->select('users', ['alice'], 'name'));
        $this->assertSame([[1, 'alice', 10, null]], $this->c->select('users', ['alice'], 1));
        $this->assertSame([], $this->c->select('users', [2]));
    }

    public function testSelectIteratorsLimitOffset(): void
    {
        for ($i = 1; $i <= 10; $i++) {
            $this->c->insert('users', [$i, "u$i", $i * 10]);
        }
        $ids = static fn (array $rows) => \array_column($rows, 0);
        $this->assertSame(\range(1, 10), $ids($this->c->select('users', [], iterator: IteratorType::ALL)));
        $this->assertSame([5], $ids($this->c->select('users', [5], iterator: 'EQ')));
        $this->assertSame([6, 7, 8, 9, 10], $ids($this->c->select('users', [5], iterator: IteratorType::GT)));
        $this->assertSame([5, 6, 7, 8, 9, 10], $ids($this->c->select('users', [5], iterator: 'ge')));
        $this->assertSame([4, 3, 2, 1], $ids($this->c->select('users', [5], iterator: IteratorType::LT)));
        $this->assertSame([5, 4, 3, 2, 1], $ids($this->c->select('users', [5], iterator: IteratorType::LE)));
        $this->assertSame([5], $ids($this->c->select('users', [5], iterator: IteratorType::REQ)));
        $this->assertSame([3, 4], $ids($this->c->select('users', [], limit: 2, offset: 2, iterator: 'ALL')));
        $this->assertSame([8, 9], $ids($this->c->select('users', [70], 'score', 2, 1, 'GE')));
        $this->assertSame([], $this->c->select('users', [], limit: 0, iterator: 'ALL'));
    }

    public function testLargeRepliesSpanManyReads(): void
    {
        $this->c->evaluate("for i = 1, 3000 do box.space.users:insert{i, 'user' .. i, i, string.rep('x', 200)} end");
        $space = $this->c->evaluate('return box.space.users.id')[0];
        $all = $this->c->select($space, [], 0, iterator: 'ALL'); // ~700 KB: the fast path's slow branch
        $this->assertCount(3000, $all);
        $this->assertSame([3000, 'user3000', 3000, \str_repeat('x', 200)], $all[2999]);
        $futures = [$this->c->async()->select($space, [], iterator: 'ALL'), $this->c->async()->select($space, [7])];
        [$again, $one] = \Ferry\Tarantool\Async\Future::all($futures);
        $this->assertSame($all, $again);
        $this->assertSame([[7, 'user7', 7, \str_repeat('x', 200)]], $one);
    }

    public function testSelectByUnknownIdIsAServerError(): void
    {
        try {
            $this->c->select(99999, [1]);
            $this->fail('no exception');
        } catch (\Ferry\Tarantool\Exception\ServerException $e) {
            $this->assertSame(36, $e->getCode()); // ER_NO_SUCH_SPACE
            $this->assertStringContainsString("Space '99999' does not exist", $e->getMessage());
        }
        $this->c->ping(); // the connection is still in step
        $this->assertSame([], $this->c->select('users', [12345]));
    }

    public function testBitsetIterators(): void
    {
        foreach ([1 => 0b0001, 2 => 0b0011, 3 => 0b0100, 4 => 0b0111] as $id => $mask) {
            $this->c->insert('bits', [$id, $mask]);
        }
        $ids = function (int|string $it, int $mask): array {
            $ids = \array_column($this->c->select('bits', [$mask], 'mask', iterator: $it), 0);
            \sort($ids);
            return $ids;
        };
        $this->assertSame([2, 4], $ids(IteratorType::BITS_ALL_SET, 0b0011));
        $this->assertSame([1, 2, 4], $ids('BITS_ANY_SET', 0b0001));
        $this->assertSame([3], $ids(IteratorType::BITS_ALL_NOT_SET, 0b0011));
    }

    public function testReplace(): void
    {
        $this->c->insert('users', [1, 'a']);
        $this->assertSame([1, 'b', null, null], $this->c->replace('users', [1, 'b', null, null]));
        $this->assertSame([2, 'c'], $this->c->replace('users', [2, 'c']));
        $this->assertSame([[1, 'b', null, null], [2, 'c']], $this->c->select('users', [], iterator: 'ALL'));
    }

    public function testUpdateWithEveryOperator(): void
    {
        $this->c->insert('users', [1, 'hello world', 0b1100, ['x']]);
        $this->c->evaluate("box.space.users:replace{1, 'hello world', 12, 'tag', 5, 7, 100}");
        $ops = Operations::new()
            ->splice('name', 1, 5, 'HELLO')   // 1-based offset, as in Lua
            ->bitAnd(3, 0b0100)
            ->set(4, 'new')
            ->add(5, 10)
            ->subtract(-2, 2)
            ->bitOr(-1, 1);
        $this->assertSame([1, 'HELLO world', 0b0100, 'new', 15, 5, 101], $this->c->update('users', 1, $ops));
        $tuple = $this->c->update('users', [1], [['^', 3, 0b0110], ['#', 6, 2], ['!', 5, 'ins']]);
        $this->assertSame([1, 'HELLO world', 0b0010, 'new', 'ins', 15], $tuple);
        $this->assertSame([1, 'by name', 0b0010, 'new', 'ins', 15], $this->c->update('users', ['HELLO world'], [['=', 'name', 'by name']], 'name'));
        $this->assertNull($this->c->update('users', [99], Operations::new()->set(2, 'x')));
    }

    public function testUpsert(): void
    {
        $this->c->upsert('users', [7, 'seven', 1], Operations::new()->add('score', 5));
        $this->assertSame([[7, 'seven', 1]], $this->c->select('users', 7));
        $this->c->upsert('users', [7, 'ignored', 1], [['+', 3, 5], ['=', 2, 'SEVEN']]);
        $this->assertSame([[7, 'SEVEN', 6]], $this->c->select('users', 7));
    }

    public function testDelete(): void
    {
        $this->c->insert('users', [1, 'a']);
        $this->c->insert('users', [2, 'b']);
        $this->assertSame([1, 'a'], $this->c->delete('users', 1));
        $this->assertSame([2, 'b'], $this->c->delete('users', ['b'], 'name'));
        $this->assertNull($this->c->delete('users', [3]));
        $this->assertSame([], $this->c->select('users', [], iterator: 'ALL'));
    }

    public function testCallAndEvaluate(): void
    {
        $this->assertSame([1, 'two', [3]], $this->c->call('multi'));
        $this->assertSame([0.01], $this->c->call('slow', [0.01]));
        $this->assertSame(['test'], $this->c->call('whoami'));
        $this->assertSame([5, 'ab'], $this->c->evaluate('local a, b = ... return a + b, "a" .. "b"', [2, 3]));
        $this->assertSame([['k' => 'v', 'n' => [1, 2]]], $this->c->evaluate('return ...', [['k' => 'v', 'n' => [1, 2]]]));
        $this->assertSame([], $this->c->evaluate('local x = 1'));
    }

    public function testSqlQueryWithPositionalAndNamedBinds(): void
    {
        $this->c->insert('users', [1, 'alice', 10]);
        $this->c->insert('users', [2, 'bob', 20]);
        $r = $this->c->execute('SELECT "id", "name" FROM "users" WHERE "score" >= ? ORDER BY "id"', [10]);
        $this->assertSame([['id' => 1, 'name' => 'alice'], ['id' => 2, 'name' => 'bob']], $r->rows);
        $this->assertSame(['id', 'name'], $r->columnNames());
        $this->assertSame([['name' => 'id', 'type' => 'unsigned'], ['name' => 'name', 'type' => 'string']], $r->columns);
        $this->assertCount(2, $r);
        $r = $this->c->execute('SELECT "name" FROM "users" WHERE "id" = :id AND "score" = @score', ['id' => 2, '@score' => 20]);
        $this->assertSame([['name' => 'bob']], $r->rows);
        $this->assertSame(['name' => 'bob'], $r->first());
        $r = $this->c->execute('SELECT 1 AS a, 1 AS a');
        $this->assertSame([[1, 1]], $r->rows, 'duplicate column names keep positional rows');
    }

    public function testSqlDmlRowCountAndAutoincrementIds(): void
    {
        $r = $this->c->execute('INSERT INTO "users" ("id", "name") VALUES (NULL, ?), (NULL, ?)', ['x', 'y']);
        $this->assertSame(2, $r->rowCount);
        $this->assertSame([1, 2], $r->autoincrementIds);
        $this->assertSame([], $r->rows);
        $r = $this->c->execute('UPDATE "users" SET "score" = 5 WHERE "id" > 0');
        $this->assertSame(2, $r->rowCount);
        $this->assertSame([], $r->autoincrementIds);
        $this->assertSame(2, $this->c->execute('DELETE FROM "users"')->rowCount);
    }

    public function testPreparedStatements(): void
    {
        $this->c->insert('users', [1, 'alice', 10]);
        $st = $this->c->prepare('SELECT "name" FROM "users" WHERE "id" = ?');
        $this->assertSame(1, $st->bindCount);
        $this->assertSame([['name' => 'name', 'type' => 'string']], $st->columns);
        $this->assertSame([['name' => 'alice']], $st->execute([1])->rows);
        $this->assertSame([], $st->execute([2])->rows);
        $ins = $this->c->prepare('INSERT INTO "users" ("id", "name") VALUES (:id, :name)');
        $this->assertSame(2, $ins->bindCount);
        $this->assertSame(['name' => ':id', 'type' => 'ANY'], $ins->params[0]);
        $this->assertSame(1, $ins->execute(['id' => 5, 'name' => 'eve'])->rowCount);
        $st->close();
        $this->expectException(\Ferry\Tarantool\Exception\ServerException::class);
        $this->c->executePrepared($st->id(), [1]);
    }

    public function testPreparedStatementSurvivesReconnect(): void
    {
        $this->c->insert('users', [1, 'alice', 10]);
        $st = $this->c->prepare('SELECT "name" FROM "users" WHERE "id" = ?');
        $oldId = $st->id();
        $this->c->close();
        $this->assertSame([['name' => 'alice']], $st->execute([1])->rows);
        $this->assertSame($oldId, $st->id(), 'the same text prepares to the same id');
    }

    public function testArgumentErrorsAreClear(): void
    {
        try {
            $this->c->select('users', [], iterator: 'SIDEWAYS');
            $this->fail('no exception');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('Unknown iterator "SIDEWAYS"', $e->getMessage());
        }
        try {
            $this->c->update('users', 1, [['%', 2, 1]]);
            $this->fail('no exception');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('Unknown update operator "%"', $e->getMessage());
        }
        $this->expectExceptionMessage('fields are numbered from 1');
        Operations::new()->set(0, 'x');
    }
}
