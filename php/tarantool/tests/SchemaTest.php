<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Connection\Connection;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Exception\SchemaException;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Tests\Support\CutProxy;

/** Names resolved through _vspace/_vindex, cached, and refreshed when DDL happens meanwhile. */
final class SchemaTest extends TarantoolTestCase
{
    private function ddl(string $lua): void
    {
        // A separate session, as another application would do it.
        $this->client()->evaluate($lua);
    }

    public function testRecreatedSpaceIsFollowedThroughSchemaVersion(): void
    {
        $this->ddl("local s = box.schema.space.create('ephemeral', {id = 700}) s:create_index('pk') s:replace{1, 'first'}");
        $conn = new Connection(static::$server->uri());
        $c = new Client($conn);
        $this->assertSame([[1, 'first']], $c->select('ephemeral', 1));
        $this->assertSame(700, $conn->schema()->spaceId('ephemeral'));
        $version = $conn->schema()->version();
        $this->assertGreaterThan(0, $version);

        $this->ddl("box.space.ephemeral:drop() local s = box.schema.space.create('ephemeral', {id = 701}) s:create_index('pk') s:replace{1, 'second'}");
        // The cache still says 700: the request carries the old version, is refused with
        // ER_WRONG_SCHEMA_VERSION, and retried once with fresh ids.
        $this->assertSame([[1, 'second']], $c->select('ephemeral', 1));
        $this->assertSame(701, $conn->schema()->spaceId('ephemeral'));
        $this->assertGreaterThan($version, $conn->schema()->version());
        $this->ddl('box.space.ephemeral:drop()');
    }

    public function testRenamedIndexAndDroppedSpace(): void
    {
        $this->ddl("local s = box.schema.space.create('renames') s:create_index('pk') s:create_index('by_name', {parts = {2, 'string'}}) s:replace{1, 'x'}");
        $c = $this->client();
        $this->assertSame([[1, 'x']], $c->select('renames', 'x', 'by_name'));
        $this->ddl("box.space.renames.index.by_name:rename('by_label')");
        $this->assertSame([[1, 'x']], $c->select('renames', 'x', 'by_label'));
        try {
            $c->select('renames', 'x', 'by_name');
            $this->fail('no exception');
        } catch (SchemaException $e) {
            $this->assertStringContainsString('Index "by_name" does not exist', $e->getMessage());
        }
        $this->ddl('box.space.renames:drop()');
        $this->expectException(SchemaException::class);
        $c->select('renames', 'x', 'by_label');
    }

    public function testSpaceCreatedAfterAFailedLookupIsFound(): void
    {
        $c = $this->client();
        try {
            $c->insert('late_space', [1]);
            $this->fail('no exception');
        } catch (SchemaException) {
        }
        $this->ddl("box.schema.space.create('late_space'):create_index('pk')");
        $this->assertSame([1], $c->insert('late_space', [1]));
        $this->ddl('box.space.late_space:drop()');
    }

    public function testWriteThroughNameAfterDdlIsAppliedOnce(): void
    {
        $this->ddl("local s = box.schema.space.create('counter') s:create_index('pk') s:replace{1, 0}");
        $c = $this->client();
        $c->update('counter', 1, [['+', 2, 1]]);
        $this->ddl("box.schema.space.create('unrelated'):create_index('pk')");
        $this->assertSame([1, 2], $c->update('counter', 1, [['+', 2, 1]]));
        $this->assertSame([[1, 2]], $c->select('counter', 1));
        $this->ddl('box.space.counter:drop() box.space.unrelated:drop()');
    }

    public function testRequestsByIdSendNoSchemaVersion(): void
    {
        $this->ddl("local s = box.schema.space.create('by_id', {id = 710}) s:create_index('pk') s:replace{1}");
        $conn = new Connection(static::$server->uri());
        $before = $conn->handle(new Request(Iproto::SELECT, [Iproto::SPACE_ID => 710, Iproto::INDEX_ID => 0, Iproto::LIMIT => 10, Iproto::OFFSET => 0, Iproto::ITERATOR => 0, Iproto::KEY => []]));
        $this->ddl("box.schema.space.create('bump'):create_index('pk')");
        $after = $conn->handle(new Request(Iproto::SELECT, [Iproto::SPACE_ID => 710, Iproto::INDEX_ID => 0, Iproto::LIMIT => 10, Iproto::OFFSET => 0, Iproto::ITERATOR => 0, Iproto::KEY => []]));
        $this->assertSame([[1]], $after->data());
        $this->assertGreaterThan($before->schemaVersion, $after->schemaVersion);
        $this->assertSame(0, $conn->schema()->version(), 'no name was resolved, nothing cached');
        $this->ddl('box.space.by_id:drop() box.space.bump:drop()');
    }

    /**
     * DDL lands between the space lookup and the index lookup of one request: the proxy holds
     * the _vindex lookup (frame 2) until a second connection renamed the space and created a
     * new one under its name. Ids mixed from before and after the DDL, sent with the newer
     * version, would read the renamed space; resolving from one snapshot finds the new one.
     */
    public function testDdlBetweenTheSpaceAndIndexLookupsIsNotMissed(): void
    {
        $this->ddl(<<<'LUA'
            local s = box.schema.space.create('race', {id = 720})
            s:create_index('pk') s:create_index('by_v', {parts = {2, 'string'}}) s:replace{1, 'k', 'old space'}
            LUA);
        $proxy = new CutProxy(static::$server, [
            'hold_before_frame' => 2,
            'eval_uri' => static::$server->uri(),
            'eval' => <<<'LUA'
                box.space.race:rename('race_old')
                local s = box.schema.space.create('race', {id = 721})
                s:create_index('pk') s:create_index('by_v', {parts = {2, 'string'}}) s:replace{1, 'k', 'new space'}
                LUA,
        ]);
        try {
            $rows = Client::connect($proxy->uri(), ['read_timeout' => 5])->select('race', 'k', 'by_v');
            $this->assertSame('held 2', $proxy->expect('held '), 'the DDL ran between the two lookups');
            $this->assertSame([[1, 'k', 'new space']], $rows);
        } finally {
            $proxy->stop();
            $this->ddl('box.space.race:drop() box.space.race_old:drop()');
        }
    }
}
