<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\MsgPack\Ext\Decimal;
use Ferry\MsgPack\Ext\ErrorStack;
use Ferry\MsgPack\Ext\Uuid;
use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Exception\SchemaException;
use Ferry\Tarantool\Exception\ServerException;

/** Error replies, the extended error stack, pushes, decimal and uuid. */
final class ErrorsAndTypesTest extends TarantoolTestCase
{
    public function testServerErrorCarriesCodeMessageAndStack(): void
    {
        $c = $this->client();
        $c->replace('users', [1, 'dup']);
        try {
            $c->insert('users', [1, 'dup']);
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertSame(3, $e->getCode()); // ER_TUPLE_FOUND
            $this->assertStringContainsString('Duplicate key exists', $e->getMessage());
            $this->assertCount(1, $e->stack);
            $this->assertSame('ClientError', $e->stack[0]->type);
            $this->assertSame(3, $e->stack[0]->code);
            $this->assertStringEndsWith('.c', $e->stack[0]->file);
            $this->assertGreaterThan(0, $e->stack[0]->line);
        }
        // The connection stays usable after an error reply.
        $this->assertSame([[1, 'dup']], $c->select('users', 1));
    }

    public function testNestedErrorStackFromLua(): void
    {
        try {
            $this->client()->call('fail_nested');
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertSame('outer failure', $e->getMessage());
            $this->assertSame(['CustomError', 'CustomError'], \array_map(static fn ($f) => $f->type, $e->stack));
            $this->assertSame(['outer failure', 'inner cause'], \array_map(static fn ($f) => $f->message, $e->stack));
            $this->assertSame(['custom_type' => 'OuterError'], $e->stack[0]->fields);
        }
    }

    public function testLuaErrorAndUnknownFunction(): void
    {
        $c = $this->client();
        try {
            $c->evaluate("error('boom')");
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertSame(32, $e->getCode()); // ER_PROC_LUA
            $this->assertStringContainsString('boom', $e->getMessage());
        }
        try {
            $c->call('no_such_function');
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertSame(33, $e->getCode()); // ER_NO_SUCH_PROC
        }
        try {
            $c->execute('SELEKT 1');
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertStringContainsString('Syntax error', $e->getMessage());
        }
    }

    public function testErrorObjectAsValueDecodesToErrorStack(): void
    {
        $c = $this->client();
        $r = $c->evaluate("box.session.settings.error_marshaling_enabled = true
            local e = box.error.new({reason = 'as value', type = 'ValErr'})
            box.session.settings.error_marshaling_enabled = true
            return e");
        $c->evaluate('box.session.settings.error_marshaling_enabled = false');
        $this->assertInstanceOf(ErrorStack::class, $r[0]);
        $this->assertSame('as value', $r[0]->first()->message);
        $this->assertSame('CustomError', $r[0]->first()->type);
        $this->assertSame(['custom_type' => 'ValErr'], $r[0]->first()->fields);
    }

    public function testUnknownSpaceAndIndexNames(): void
    {
        $c = $this->client();
        try {
            $c->select('no_such_space');
            $this->fail('no exception');
        } catch (SchemaException $e) {
            $this->assertSame('Space "no_such_space" does not exist (or is not visible to this user)', $e->getMessage());
        }
        $this->expectException(SchemaException::class);
        $this->expectExceptionMessageMatches('/Index "nope" does not exist in space #\d+/');
        $c->select('users', [], 'nope');
    }

    public function testPushMessagesGoToTheCallbackNotTheReply(): void
    {
        $c = $this->client();
        $pushed = [];
        $result = $c->call('pusher', [3], static function (mixed $data, int $sync) use (&$pushed): void {
            $pushed[] = $data;
        });
        $this->assertSame(['done'], $result);
        $this->assertSame([['i' => 1], ['i' => 2], ['i' => 3]], $pushed);
        // Without a callback pushes are dropped and the reply is still the reply.
        $this->assertSame(['done'], $c->call('pusher', [2]));
        $this->assertSame(['x'], $c->evaluate("box.session.push('p') return 'x'"));
    }

    public function testConnectionWideDefaultPushReceiver(): void
    {
        $default = $own = [];
        $c = $this->client(['on_push' => static function ($d) use (&$default) { $default[] = $d; }]);
        $this->assertSame(['done'], $c->call('pusher', [2]));
        $this->assertSame(['done'], $c->call('pusher', [1], static function ($d) use (&$own) { $own[] = $d; }));
        $this->assertSame(['done'], $c->async()->call('pusher', [1])->await());
        $this->assertSame([['i' => 1], ['i' => 2], ['i' => 1]], $default);
        $this->assertSame([['i' => 1]], $own, 'a per-request callback takes precedence');
    }

    public function testPushesOfConcurrentRequestsStayApart(): void
    {
        $c = $this->client();
        $a = $b = [];
        $fa = $c->async()->call('pusher', [2], static function ($d) use (&$a) { $a[] = $d; });
        $fs = $c->async()->select('users', [], iterator: 'ALL');
        $fb = $c->async()->evaluate("box.session.push('b1') box.session.push('b2') return 'B'", [], static function ($d) use (&$b) { $b[] = $d; });
        [$ra, $rs, $rb] = Future::all([$fa, $fs, $fb]);
        $this->assertSame(['done'], $ra);
        $this->assertSame(['B'], $rb);
        $this->assertIsArray($rs);
        $this->assertSame([['i' => 1], ['i' => 2]], $a);
        $this->assertSame(['b1', 'b2'], $b);
    }

    public function testPushCallbackExceptionFailsOnlyItsRequest(): void
    {
        $c = $this->client();
        try {
            $c->call('pusher', [2], static function (): void {
                throw new \DomainException('callback refused');
            });
            $this->fail('no exception');
        } catch (\DomainException $e) {
            $this->assertSame('callback refused', $e->getMessage());
        }
        $this->assertSame([1, 'two', [3]], $c->call('multi'));
    }

    public function testDecimalAndUuidRoundTrip(): void
    {
        $c = $this->client();
        $id = Uuid::fromString('6ba7b810-9dad-11d1-80b4-00c04fd430c8');
        $amount = Decimal::fromString('-12345678901234567890.0123456789');
        $stored = $c->insert('money', [$id, $amount]);
        $this->assertInstanceOf(Uuid::class, $stored[0]);
        $this->assertTrue($id->equals($stored[0]));
        $this->assertInstanceOf(Decimal::class, $stored[1]);
        $this->assertSame('-12345678901234567890.0123456789', (string) $stored[1]);
        $this->assertSame([[(string) $id, '-12345678901234567890.0123456789']], [\array_map('strval', $c->select('money', [$id])[0])]);
        // Arithmetic on the server proves it received real decimals, not strings.
        $r = $c->evaluate('local d = ... return d * 2, type(d)', [Decimal::fromString('1.25')]);
        $this->assertSame('2.50', (string) $r[0]);
        $this->assertSame('cdata', $r[1]);
        $r = $c->evaluate("local u = ... return u:str(), type(u)", [$id]);
        $this->assertSame([(string) $id, 'cdata'], $r);
        $r = $c->evaluate("return require('decimal').new('0.1') + require('decimal').new('0.2')");
        $this->assertSame('0.3', (string) $r[0]);
        $c->delete('money', [$id]);
        $this->assertSame([], $c->select('money', [$id]));
    }
}
