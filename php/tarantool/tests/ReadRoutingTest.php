<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Tests\Support\Cluster;
use PHPUnit\Framework\TestCase;

/**
 * Where a ReplicaSet sends each request, told by the replies themselves: every node keeps its
 * own box.info.id in the temporary (never replicated) space whoami, so a SELECT answers with
 * the id of the instance that served it.
 */
final class ReadRoutingTest extends TestCase
{
    private const MASTER_LUA = <<<'LUA'
        box.schema.space.create('whoami', {temporary = true, format = {{name = 'k', type = 'unsigned'}, {name = 'id', type = 'unsigned'}}})
        box.space.whoami:create_index('pk')
        box.schema.space.create('kv', {format = {{name = 'k', type = 'unsigned'}, {name = 'v', type = 'string'}}})
        box.space.kv:create_index('pk')
        box.schema.user.create('app', {password = 'app'})
        box.schema.user.grant('app', 'read', 'space', 'whoami')
        box.schema.user.grant('app', 'read,write', 'space', 'kv')
        LUA;
    private const NODE_LUA = <<<'LUA'
        box.space.whoami:replace{1, box.info.id}
        function instance_id() return box.info.id end
        LUA;

    private static ?Cluster $cluster = null;
    /** @var array<int, int> node index => box.info.id */
    private static array $ids = [];

    public static function setUpBeforeClass(): void
    {
        self::$cluster = Cluster::start(3, [], self::MASTER_LUA, self::NODE_LUA);
        self::$ids = self::$cluster->ids();
    }

    public static function tearDownAfterClass(): void
    {
        self::$cluster?->stop();
        self::$cluster = null;
    }

    protected function tearDown(): void
    {
        Loop::set(new StreamSelectLoop());
    }

    /** @param array<string, mixed> $options */
    private function replicaSet(array $options = [], ?Cluster $cluster = null): Client
    {
        return Client::replicaSet(($cluster ?? self::$cluster)->uris(), $options + ['connect_timeout' => 1, 'read_timeout' => 2]);
    }

    private static function servedBy(Client $c): int
    {
        return $c->select('whoami', 1)[0][1];
    }

    public function testReadsAlternateBetweenTheReplicasAndWritesGoToTheMaster(): void
    {
        [$master, $r1, $r2] = self::$ids;
        $rs = $this->replicaSet(['read_from_replicas' => true, 'read_only_calls' => ['instance_id']]);
        $served = [];
        for ($i = 0; $i < 40; $i++) {
            $served[] = self::servedBy($rs);
        }
        $counts = \array_count_values($served);
        \ksort($counts);
        $this->assertSame([$r1 => 20, $r2 => 20], $counts, 'SELECTs shared evenly by the two replicas, none on the master');
        for ($i = 1; $i < 40; $i++) {
            $this->assertNotSame($served[$i - 1], $served[$i], "read $i went to the same replica twice in a row");
        }

        $this->assertContains($rs->execute('SELECT "id" FROM "whoami"')->first()['id'], [$r1, $r2], 'SQL SELECT on a replica');
        $this->assertContains($rs->call('instance_id')[0], [$r1, $r2], 'declared read-only CALL on a replica');
        $this->assertSame([$master], $rs->evaluate('return box.info.id'), 'EVAL may write: master');
        $this->assertSame([1, 'one'], $rs->replace('kv', [1, 'one']));
        $this->assertSame(1, $rs->execute('INSERT INTO "kv" VALUES (2, \'two\')')->rowCount, 'SQL INSERT (on the master: replicas refuse writes)');
        $this->assertSame([[2, 'two']], self::$cluster->admin(0)->select('kv', 2));
    }

    public function testUndeclaredCallsAndReadsWithoutTheOptionGoToTheMaster(): void
    {
        $master = self::$ids[0];
        $rs = $this->replicaSet(['read_from_replicas' => true]);
        $this->assertSame([$master], $rs->call('instance_id'), 'a CALL not listed in read_only_calls may write');

        $plain = $this->replicaSet();
        for ($i = 0; $i < 5; $i++) {
            $this->assertSame($master, self::servedBy($plain), 'without read_from_replicas reads stay on the first instance');
        }
    }

    public function testConcurrentFirstReadsFromFibersNeverReachTheMaster(): void
    {
        [$master, $r1, $r2] = self::$ids;
        $rs = $this->replicaSet(['read_from_replicas' => true]);
        // The first requests of a fresh set arrive while it is still asking every node for
        // box.info.ro: they must wait for the answer, not guess.
        $served = Scheduler::run(static function () use ($rs): array {
            $tasks = [];
            for ($i = 0; $i < 20; $i++) {
                $tasks[] = Scheduler::spawn(static fn () => self::servedBy($rs));
            }
            return Future::all($tasks);
        });
        $this->assertNotContains($master, $served);
        $this->assertEqualsCanonicalizing([$r1, $r2], \array_values(\array_unique($served)));
    }

    public function testWithoutEvalRightsReadsAvoidTheMasterOnceAWriteFoundIt(): void
    {
        [, $r1, $r2] = self::$ids;
        // 'app' may not eval, so box.info.ro cannot be asked: roles are only learned from writes.
        $rs = Client::replicaSet(self::$cluster->uris('app:app'), ['read_from_replicas' => true, 'connect_timeout' => 1, 'read_timeout' => 2]);
        $this->assertSame([4, 'four'], $rs->replace('kv', [4, 'four']));
        $served = [];
        for ($i = 0; $i < 12; $i++) {
            $served[] = self::servedBy($rs);
        }
        $counts = \array_count_values($served);
        \ksort($counts);
        $this->assertSame([$r1 => 6, $r2 => 6], $counts, 'the instance that took the write is the last resort for reads');
    }

    public function testReadsSkipDeadReplicasAndFallBackToTheMaster(): void
    {
        $cluster = Cluster::start(3, [], self::MASTER_LUA, self::NODE_LUA);
        try {
            [$master, $r1, $r2] = $cluster->ids();
            $rs = $this->replicaSet(['read_from_replicas' => true, 'down_for' => 30], $cluster);
            $this->assertEqualsCanonicalizing([$r1, $r2], [self::servedBy($rs), self::servedBy($rs)]);

            $cluster->kill(1);
            for ($i = 0; $i < 6; $i++) {
                $this->assertSame($r2, self::servedBy($rs), 'the surviving replica serves every read');
            }
            $cluster->kill(2);
            for ($i = 0; $i < 3; $i++) {
                $this->assertSame($master, self::servedBy($rs), 'no replica left: the master serves reads');
            }
            $this->assertSame([3, 'three'], $rs->replace('kv', [3, 'three']), 'writes are unaffected');
        } finally {
            $cluster->stop();
        }
    }
}
