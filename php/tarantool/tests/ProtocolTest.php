<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\MsgPack\Packer;
use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Codec\ExtCodec;
use Ferry\Tarantool\Codec\PureCodec;
use Ferry\Tarantool\Connection\FrameReader;
use Ferry\Tarantool\Connection\Options;
use Ferry\Tarantool\Exception\ProtocolException;
use Ferry\Tarantool\Operations;
use Ferry\Tarantool\Protocol\Encoder;
use Ferry\Tarantool\Protocol\Greeting;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\RequestFactory;
use PHPUnit\Framework\TestCase;

/** Pieces that need no server. */
final class ProtocolTest extends TestCase
{
    private static function greeting(string $salt): string
    {
        return \str_pad('Tarantool 2.6.0 (Binary) 1243fc3d-c8e6-40ab-ac21-6805ec58cae8', 63) . "\n"
            . \str_pad(\base64_encode($salt), 63) . "\n";
    }

    public function testGreetingAndScramble(): void
    {
        $salt = \random_bytes(32);
        $g = Greeting::parse(self::greeting($salt));
        $this->assertSame('2.6.0', $g->version);
        $this->assertSame('1243fc3d-c8e6-40ab-ac21-6805ec58cae8', $g->instanceUuid);
        $this->assertSame(\substr($salt, 0, 20), $g->salt);
        // chap-sha1 spelled out byte by byte, independently of the implementation's XOR.
        $h1 = \sha1('pw', true);
        $h3 = \sha1(\substr($salt, 0, 20) . \sha1($h1, true), true);
        $expected = '';
        for ($i = 0; $i < 20; $i++) {
            $expected .= \chr(\ord($h1[$i]) ^ \ord($h3[$i]));
        }
        $this->assertSame($expected, $g->scramble('pw'));
        $this->assertSame(20, \strlen($g->scramble('')));
    }

    public function testBadGreetings(): void
    {
        foreach (['short' => 'Tarantool', 'http' => \str_pad('HTTP/1.1 200 OK', 128), 'salt' => \str_pad('Tarantool 2.6.0 (Binary) x', 64) . \str_pad('!!!', 64)] as $case => $bytes) {
            try {
                Greeting::parse($bytes);
                $this->fail("accepted $case");
            } catch (ProtocolException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
    }

    public function testUintEncodingMatchesTheCodec(): void
    {
        $p = new Packer();
        foreach ([0, 1, 127, 128, 255, 256, 65535, 65536, 0xFFFFFFFF, 0x100000000, \PHP_INT_MAX] as $v) {
            $this->assertSame(\bin2hex($p->pack($v)), \bin2hex(Encoder::uint($v)), "uint $v");
        }
    }

    public function testFrameLayout(): void
    {
        $e = new Encoder(new PureCodec());
        $frame = $e->frame(Iproto::SELECT, 300, 0, [Iproto::SPACE_ID => 512, Iproto::KEY => [1, 'a']]);
        $this->assertSame('ce' . \sprintf('%08x', \strlen($frame) - 5) . '820001' . '01cd012c' . '82' . '10cd0200' . '20' . '9201a161', \bin2hex($frame));
        $withSchema = $e->frame(Iproto::PING, 1, 81, []);
        $this->assertSame('ce00000008' . '830040' . '0101' . '0551' . '80', \bin2hex($withSchema));
    }

    public function testGenericHeaderDecoding(): void
    {
        // Same header as Tarantool's fixed layout, but with compact integers and another key order.
        $hdr = "\x83\x05\x51\x01\xcd\x01\x00\x00\xcd\x80\x03";
        $this->assertSame([0x8003, 256, 81, \strlen($hdr)], FrameReader::header($hdr . "\x80", 0, \strlen($hdr) + 1));
        $this->assertNull(FrameReader::header("\x92\x00\x00", 0, 3), 'not a map');
        $this->assertNull(FrameReader::header("\x81\x00", 0, 2), 'truncated');
        $this->assertNull(FrameReader::header("\x81\x00\xa1x", 0, 4), 'string value');
    }

    public function testIdempotentByTypeOrByDeclaration(): void
    {
        $this->assertTrue(RequestFactory::ping()->isIdempotent());
        $this->assertTrue(RequestFactory::select(512, [1], 0, 10, 0, 0)->isIdempotent());
        $this->assertTrue(RequestFactory::execute('SELECT 1', [])->isIdempotent());
        $this->assertFalse(RequestFactory::execute('INSERT INTO t VALUES (1)', [])->isIdempotent());
        $this->assertFalse(RequestFactory::insert(512, [1])->isIdempotent());
        $this->assertFalse(RequestFactory::call('f', [], null)->isIdempotent());
        $this->assertFalse(RequestFactory::evaluate('return 1', [], null)->isIdempotent());
        $call = RequestFactory::call('set_status', [1, 'done'], null, idempotent: true);
        $this->assertTrue($call->isIdempotent());
        $this->assertFalse($call->isReadOnly(), 'idempotent is not read-only: it still goes to the master');
        $this->assertTrue(RequestFactory::evaluate('return 1', [], null, true)->isIdempotent());

        $replace = RequestFactory::insert(512, [1], true);
        $marked = $replace->with(idempotent: true);
        $this->assertNotSame($replace, $marked);
        $this->assertFalse($replace->isIdempotent(), 'with() leaves the original alone');
        $this->assertTrue($marked->isIdempotent());
        $timed = $marked->with(timeout: 1.5);
        $this->assertSame([1.5, true, $marked->body], [$timed->timeout, $timed->idempotent, $timed->body]);
        $this->assertSame($timed, $timed->with(), 'nothing to change: the same request');
        $this->expectException(\InvalidArgumentException::class);
        $replace->with(timeout: -1.0);
    }

    public function testSqlReadOnlyClassification(): void
    {
        foreach (['SELECT 1', ' select * from t', "-- c\nVALUES (1)", '/* x */ EXPLAIN SELECT 1', 'WITH a AS (SELECT 1) SELECT * FROM a'] as $sql) {
            $this->assertTrue(Request::isReadOnlySql($sql), $sql);
        }
        foreach (['INSERT INTO t VALUES (1)', 'update t set a=1', 'DELETE FROM t', 'CREATE TABLE t (a INT PRIMARY KEY)', 'WITH a AS (SELECT 1) DELETE FROM t', '', '(SELECT 1)'] as $sql) {
            $this->assertFalse(Request::isReadOnlySql($sql), $sql);
        }
        $this->assertTrue(RequestFactory::unprepare(5)->isReadOnly());
        $this->assertFalse(RequestFactory::executePrepared(5, [], null)->isReadOnly());
        $this->assertTrue(RequestFactory::executePrepared(5, [], 'SELECT 1')->isReadOnly());
        $this->assertSame('EXECUTE stmt=5 SELECT 1', RequestFactory::executePrepared(5, [], 'SELECT 1')->describe());
    }

    public function testBinds(): void
    {
        $this->assertSame([1, 'a'], RequestFactory::binds([1, 'a']));
        $this->assertSame([[':a' => 1], ['@b' => 2], ['$c' => 3]], RequestFactory::binds(['a' => 1, '@b' => 2, '$c' => 3]));
        $this->expectException(\InvalidArgumentException::class);
        RequestFactory::binds(['' => 1]);
    }

    public function testOptions(): void
    {
        $o = new Options('tcp://us%40er:p%3Ass@localhost:3301?read_timeout=2.5&persistent=1');
        $this->assertSame('us@er', $o->user);
        $this->assertSame('p:ss', $o->password);
        $this->assertSame('tcp://localhost:3301', $o->address);
        $this->assertSame(2.5, $o->readTimeout);
        $this->assertTrue($o->persistent);
        $this->assertStringNotContainsString('p:ss', $o->display);
        $this->assertNotSame((new Options('a:b@localhost:3301'))->persistentAddress(), (new Options('c:d@localhost:3301'))->persistentAddress());
        $this->assertSame('unix:///tmp/t.sock', (new Options('/tmp/t.sock'))->address);
        $this->assertSame('tcp://[::1]:3301', (new Options('[::1]:3301'))->address);
        $this->assertFalse((new Options('guest@h:1'))->needsAuth());
        $this->expectExceptionMessage('Option read_timeout must be a positive number of seconds');
        new Options('h:1', ['read_timeout' => -1]);
    }

    public function testOperationsFromRawLists(): void
    {
        $this->assertSame([['+', 'a', 1], [':', 2, 1, 0, 'x']], Operations::from([['+', 'a', 1], [':', 2, 1, 0, 'x']])->toArray());
        foreach ([[['+', 'a']], [['=', 1.5, 1]], ['nope'], [['?', 1, 1]]] as $bad) {
            try {
                Operations::from($bad);
                $this->fail('accepted ' . \json_encode($bad));
            } catch (\InvalidArgumentException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
    }

    public function testCodecsAgreeOnPlainValues(): void
    {
        $value = [1, -2, 'str', 1.5, true, null, ['k' => [1, 2]], 0xFFFFFFFFF];
        $pure = new PureCodec();
        $ext = new ExtCodec();
        $this->assertSame($value, $ext->unpack($pure->pack($value)));
        $this->assertSame($value, $pure->unpack($ext->pack($value)));
        $this->expectException(ProtocolException::class);
        $pure->unpack("\x92\x01");
    }

    public function testFutureAndLoopBasics(): void
    {
        $f = new Future();
        $seen = [];
        $f->onComplete(static function ($e, $v) use (&$seen) { $seen[] = $v; });
        $g = $f->then(static fn ($v) => $v * 2);
        $f->resolve(21);
        $f->resolve(99); // settled futures ignore later outcomes
        $this->assertSame([21], $seen);
        $this->assertSame(42, $g->await());
        $this->assertSame(21, Future::resolved(21)->await());

        $loop = new StreamSelectLoop();
        $order = [];
        $loop->delay(0.02, static function () use (&$order) { $order[] = 'late'; });
        $cancelled = $loop->delay(0.01, static function () use (&$order) { $order[] = 'cancelled'; });
        $loop->delay(0.0, static function () use (&$order) { $order[] = 'soon'; });
        $loop->defer(static function () use (&$order) { $order[] = 'deferred'; });
        $loop->cancel($cancelled);
        $loop->run();
        $this->assertSame(['deferred', 'soon', 'late'], $order);
        $this->assertFalse($loop->isRunning());
    }
}
