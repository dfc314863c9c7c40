<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Tests\Support\TarantoolServer;
use PHPUnit\Framework\TestCase;

/** One real tarantool per test class, with the schema below. */
abstract class TarantoolTestCase extends TestCase
{
    protected static ?TarantoolServer $server = null;

    public const SCHEMA = <<<'LUA'
        local users = box.schema.space.create('users', {format = {
            {name = 'id', type = 'unsigned'},
            {name = 'name', type = 'string'},
            {name = 'score', type = 'integer', is_nullable = true},
            {name = 'tags', type = 'any', is_nullable = true},
        }})
        users:create_index('primary', {sequence = true})
        users:create_index('name', {parts = {'name'}})
        users:create_index('score', {parts = {{'score', 'integer', is_nullable = true}}, unique = false})
        local bits = box.schema.space.create('bits', {format = {{name = 'id', type = 'unsigned'}, {name = 'mask', type = 'unsigned'}}})
        bits:create_index('primary')
        bits:create_index('mask', {type = 'bitset', parts = {'mask'}, unique = false})
        local money = box.schema.space.create('money', {format = {{name = 'id', type = 'uuid'}, {name = 'amount', type = 'decimal'}}})
        money:create_index('primary', {parts = {'id'}})
        function slow(t) require('fiber').sleep(t) return t end
        function pusher(n) for i = 1, n do box.session.push({i = i}) end return 'done' end
        function multi() return 1, 'two', {3} end
        function whoami() return box.session.user() end
        function fail_nested()
            local inner = box.error.new({reason = 'inner cause', type = 'InnerError'})
            local outer = box.error.new({reason = 'outer failure', type = 'OuterError'})
            outer:set_prev(inner)
            outer:raise()
        end
        LUA;

    /** @return array<string, string> box.cfg overrides */
    protected static function boxConfig(): array
    {
        return [];
    }

    public static function setUpBeforeClass(): void
    {
        static::$server = TarantoolServer::start(static::boxConfig(), self::SCHEMA);
    }

    public static function tearDownAfterClass(): void
    {
        static::$server?->stop();
        static::$server = null;
    }

    protected function tearDown(): void
    {
        // Each test gets a fresh loop, so a failed test cannot leave watchers behind.
        Loop::set(new StreamSelectLoop());
    }

    /** @param array<string, mixed> $options */
    protected function client(array $options = [], ?string $credentials = 'test:secret'): Client
    {
        return Client::connect(static::$server->uri($credentials), $options + ['read_timeout' => 5, 'connect_timeout' => 2]);
    }
}
