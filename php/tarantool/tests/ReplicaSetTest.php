<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\ReplicaSet;
use Ferry\Tarantool\Tests\Support\TarantoolServer;
use PHPUnit\Framework\TestCase;

/** A real master + read-only replica pair (WAL on, as replication needs it). */
final class ReplicaSetTest extends TestCase
{
    private const FUNCTIONS = "function instance_id() return box.info.id end\n";

    private TarantoolServer $master;
    private TarantoolServer $replica;

    protected function setUp(): void
    {
        $this->master = TarantoolServer::start(['wal_mode' => "'write'"], self::FUNCTIONS . <<<'LUA'
            box.once('ferry_repl', function()
                box.schema.user.grant('test', 'replication', nil, nil, {if_not_exists = true})
                local s = box.schema.space.create('kv', {format = {{name = 'k', type = 'unsigned'}, {name = 'v', type = 'string'}}})
                s:create_index('pk')
                for i = 1, 100 do s:replace{i, 'v' .. i} end
            end)
            LUA);
        $this->replica = TarantoolServer::start([
            'wal_mode' => "'write'",
            'replication' => "'test:secret@127.0.0.1:{$this->master->port}'",
            'read_only' => 'true',
        ], self::FUNCTIONS);
    }

    protected function tearDown(): void
    {
        $this->replica->stop();
        $this->master->stop();
        Loop::set(new StreamSelectLoop());
    }

    private function waitReplicated(Client $replicaDirect, int $key): void
    {
        $deadline = \microtime(true) + 5;
        while ($replicaDirect->select('kv', $key) === []) {
            if (\microtime(true) > $deadline) {
                $this->fail("key $key never reached the replica");
            }
            \usleep(5000);
        }
    }

    public function testWritesGoToTheMasterAndReadsToReplicas(): void
    {
        // The replica is listed first: writes must still find the master.
        $rs = Client::replicaSet([$this->replica->uri(), $this->master->uri()], [
            'read_from_replicas' => true,
            'read_only_calls' => ['instance_id'],
        ]);
        $this->assertSame([101, 'new'], $rs->insert('kv', [101, 'new']));
        $this->assertSame([1], Client::connect($this->master->uri())->call('instance_id'));
        $this->assertSame([2], $rs->call('instance_id'), 'declared read-only CALL served by the replica');
        $this->assertSame([1], $rs->evaluate('return box.info.id'), 'EVAL counts as a write');
        $this->waitReplicated(Client::connect($this->replica->uri()), 101);
        $this->assertSame([[101, 'new']], $rs->select('kv', 101));
        $set = $rs->terminal();
        $this->assertInstanceOf(ReplicaSet::class, $set);
        $this->assertSame("tcp://127.0.0.1:{$this->master->port}", $set->master()->options->address);
    }

    public function testFailoverWhenTheMasterIsKilledMidRun(): void
    {
        $rs = Client::replicaSet([$this->master->uri(), $this->replica->uri()], ['connect_timeout' => 0.5, 'down_for' => 5]);
        $rs->replace('kv', [1, 'written before the crash']);
        $this->waitReplicated(Client::connect($this->replica->uri()), 1);
        $served = [];
        for ($i = 1; $i <= 200; $i++) {
            if ($i === 80) {
                $this->master->kill();
            }
            $key = ($i % 100) + 1;
            $row = $rs->select('kv', $key);
            $this->assertSame($key, $row[0][0]);
            $served[] = $rs->call('instance_id')[0] ?? null;
        }
        // Before the crash reads went to the master; after it, to the replica, none failed.
        $this->assertSame([1], \array_values(\array_unique(\array_slice($served, 0, 79))));
        $this->assertSame([2], \array_values(\array_unique(\array_slice($served, 80))));

        // No writable instance: a clear error, not a hang.
        try {
            $rs->replace('kv', [2, 'lost']);
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('No writable instance available for REPLACE space=kv', $e->getMessage());
            $this->assertStringContainsString('read-only', $e->getMessage());
        }

        // Promote the replica: the next write rediscovers roles and goes there.
        Client::connect($this->replica->uri())->evaluate('box.cfg{read_only = false}');
        $this->assertSame([2, 'after failover'], $rs->replace('kv', [2, 'after failover']));
        $this->assertSame([[2, 'after failover']], Client::connect($this->replica->uri())->select('kv', 2));
    }
}
