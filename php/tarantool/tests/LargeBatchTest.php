<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Scheduler;

/**
 * A pipelined batch larger than the socket buffers both ways: many big inserts whose replies
 * (the inserted tuples) are as big. While the client writes, the server's replies must be
 * read, or the server stops reading requests once its replies back up, the client's write
 * blocks, and the batch stalls until the timeouts fail it.
 */
final class LargeBatchTest extends TarantoolTestCase
{
    private const WRITES = 400;
    private const PAD = 64 * 1024;

    /** @return iterable<string, array{bool}> */
    public static function modes(): iterable
    {
        yield 'Fibers on the loop' => [true];
        yield 'queued, then awaited without the loop' => [false];
    }

    /** @dataProvider modes */
    public function testEveryWriteOfABatchLargerThanTheBuffersIsAnswered(bool $fibers): void
    {
        $this->client()->evaluate(<<<'LUA'
            if box.space.bigbatch then box.space.bigbatch:drop() end
            local s = box.schema.space.create('bigbatch', {format = {
                {name = 'id', type = 'unsigned'}, {name = 'pad', type = 'string'},
            }})
            s:create_index('pk')
            LUA);
        $client = $this->client(['read_timeout' => 20, 'write_timeout' => 20]);
        $pad = \str_repeat('y', self::PAD);
        if ($fibers) {
            $ids = Scheduler::run(static function () use ($client, $pad): array {
                $tasks = [];
                for ($i = 1; $i <= self::WRITES; $i++) {
                    $tasks[] = Scheduler::spawn(static fn (): int => $client->insert('bigbatch', [$i, $pad])[0]);
                }
                return Future::all($tasks);
            });
        } else {
            $futures = [];
            for ($i = 1; $i <= self::WRITES; $i++) {
                $futures[] = $client->async()->insert('bigbatch', [$i, $pad]);
            }
            $ids = \array_map(static fn (Future $f): int => $f->await()[0], $futures);
        }
        $this->assertSame(\range(1, self::WRITES), $ids);
        $this->assertSame(self::WRITES, $client->evaluate("return box.space.bigbatch:len()")[0]);
    }
}
