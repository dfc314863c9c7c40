<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Fork;
use Ferry\Worker\Internal\Fork\BootSockets;
use PHPUnit\Framework\TestCase;

/**
 * The fork-server's refusal rule, on real sockets of this process: a connection names
 * itself with both ends, a listening socket or a declared one passes.
 */
final class BootSocketsTest extends TestCase
{
    /** @var list<resource> */
    private array $open = [];
    /** @var list<int> sockets the test process held before: not this test's to judge */
    private array $before = [];

    protected function setUp(): void
    {
        $this->before = BootSockets::inodes();
    }

    protected function tearDown(): void
    {
        foreach ($this->open as $stream) {
            @fclose($stream);
        }
    }

    /** @return array{resource, string} a listening socket and its address */
    private function listen(string $host): array
    {
        $server = @stream_socket_server("tcp://$host:0", $errno, $error);
        if ($server === false) {
            $this->markTestSkipped("no $host here: $error");
        }
        $this->open[] = $server;

        return [$server, stream_socket_get_name($server, false)];
    }

    private function connect(string $address)
    {
        $client = stream_socket_client("tcp://$address", $errno, $error, 5);
        $this->assertNotFalse($client, $error);
        $this->open[] = $client;

        return $client;
    }

    public function testAListeningSocketPasses(): void
    {
        $this->listen('127.0.0.1');
        $this->assertNull(BootSockets::describeShared($this->before));
    }

    public function testAConnectionIsNamedWithBothEnds(): void
    {
        [, $address] = $this->listen('127.0.0.1');
        $client = $this->connect($address);
        $local = stream_socket_get_name($client, false);
        $said = BootSockets::describeShared($this->before);
        $this->assertNotNull($said);
        $this->assertStringContainsString("TCP $local -> $address", (string) $said);
        $this->assertStringContainsString('pool.boot: exec', (string) $said);
    }

    public function testAnIPv6ConnectionIsNamedToo(): void
    {
        [, $address] = $this->listen('[::1]');
        $this->connect($address);
        $this->assertStringContainsString("-> $address", (string) BootSockets::describeShared($this->before));
    }

    public function testADeclaredConnectionPasses(): void
    {
        [, $address] = $this->listen('127.0.0.1');
        Fork::reopens($this->connect($address));
        $this->assertNull(BootSockets::describeShared($this->before));
    }

    public function testAConnectedUnixSocketIsRefused(): void
    {
        $pair = stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, 0);
        $this->open = array_merge($this->open, $pair);
        $said = BootSockets::describeShared($this->before);
        $this->assertStringContainsString('2 connections', (string) $said);
        $this->assertStringContainsString('a connected unix socket', (string) $said);
    }

    public function testTheZygotesOwnSocketsPass(): void
    {
        $pair = stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, 0);
        $this->open = array_merge($this->open, $pair);
        $this->assertNull(BootSockets::describeShared(BootSockets::inodes()));
    }

    public function testAMoldIsToldWhatItHolds(): void
    {
        [, $address] = $this->listen('127.0.0.1');
        $this->connect($address);
        $said = (string) BootSockets::describeShared($this->before, true);
        $this->assertStringContainsString('the worker chosen as the next mold holds a connection', $said);
        $this->assertStringContainsString('Fork::reopens()', $said);
    }
}
