<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests;

use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Middleware\Middleware;
use Ferry\Tarantool\Middleware\RetryMiddleware;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;
use Ferry\Tarantool\Tests\Support\CutProxy;
use Ferry\Tarantool\Tests\Support\TarantoolServer;

/**
 * A connection that breaks while a batch of writes is being written. A proxy in front of the
 * real Tarantool forwards three whole INSERT frames and a few bytes of the fourth, then resets
 * the client, whose write is still in progress (the batch is far larger than the socket
 * buffers). The server executed exactly those three; the client must report them and the
 * frames it had handed to the kernel as "maybe sent" and never replay them, and report the
 * frames still queued behind the failure as "not sent", which are safe to send again.
 */
final class ExactlyOnceTest extends TarantoolTestCase
{
    private const WRITES = 256;
    private const EXECUTED = 3; // whole frames the proxy lets through before the cut
    private const PAD = 48 * 1024;

    /** @var list<CutProxy|TarantoolServer> */
    private array $started = [];

    protected function tearDown(): void
    {
        foreach ($this->started as $s) {
            $s->stop();
        }
        parent::tearDown();
    }

    public function testRetryNeverReplaysAMaybeSentWriteAndResendsTheUnsent(): void
    {
        $space = $this->createLedger(static::$server, 701);
        // Frame 1 is the PING below, so the batch starts at frame 2.
        $proxy = $this->started[] = new CutProxy(static::$server, ['cut_after_frames' => 1 + self::EXECUTED, 'cut_extra_bytes' => 10]);
        $attempts = [];
        $client = Client::connect($proxy->uri(), ['read_timeout' => 10, 'write_timeout' => 10, 'connect_timeout' => 2])
            ->withMiddleware(new RetryMiddleware(maxRetries: 3, baseDelay: 0.01, jitter: false), self::recorder($attempts));
        $client->ping();

        $outcomes = $this->writeBatch($client, $space);
        $this->assertSame('cut ' . $this->cutOffset($space), $proxy->expect('cut '));

        $stored = self::payloads(static::$server, $space);
        $this->assertSame(\array_unique($stored), $stored, 'no write was applied twice');

        // What each first attempt was told: maybe sent up to where the write failed, then not.
        $first = \array_map(static fn (array $a) => $a[0], $attempts);
        $this->assertSame(\array_map(static fn (int $i) => "w$i", \range(0, self::WRITES - 1)), \array_keys($first), 'failed in sending order');
        $maybe = \count(\array_filter($first, static fn ($o) => $o === 'maybe'));
        $this->assertSame(\array_merge(\array_fill(0, $maybe, 'maybe'), \array_fill(0, self::WRITES - $maybe, 'not')), \array_values($first));
        $this->assertGreaterThan(self::EXECUTED, $maybe, 'the frame being cut and those before it may have been sent');
        $this->assertLessThan(self::WRITES, $maybe, 'the batch outgrew the socket buffers: some frames were never written');

        for ($i = 0; $i < self::WRITES; $i++) {
            $count = \count(\array_keys($stored, "w$i", true));
            if ($i < self::EXECUTED) {
                // Executed, reply lost: the caller cannot know, so it is told, and nothing replays it.
                $this->assertSame([1, 'maybe', ['maybe']], [$count, $outcomes[$i], $attempts["w$i"]], "w$i");
            } elseif ($i < $maybe) {
                $this->assertSame([0, 'maybe', ['maybe']], [$count, $outcomes[$i], $attempts["w$i"]], "w$i");
            } else {
                $this->assertSame([1, 'ok', ['not', 'ok']], [$count, $outcomes[$i], $attempts["w$i"]], "w$i never written, retried");
            }
        }
    }

    public function testReplicaSetFailsOverOnlyWhatWasNeverSent(): void
    {
        $other = $this->started[] = TarantoolServer::start();
        $space = $this->createLedger(static::$server, 702);
        $this->createLedger($other, 702);
        // Frame 1 on the proxied instance is the role discovery (box.info.ro).
        $proxy = $this->started[] = new CutProxy(static::$server, ['cut_after_frames' => 1 + self::EXECUTED, 'cut_extra_bytes' => 10]);
        $client = Client::replicaSet([$proxy->uri(), $other->uri(null)], ['read_timeout' => 10, 'write_timeout' => 10, 'connect_timeout' => 2, 'down_for' => 30]);
        $client->terminal()->discover();

        $outcomes = $this->writeBatch($client, $space);
        $proxy->expect('cut ');

        $first = self::payloads(static::$server, $space);
        $failedOver = self::payloads($other, $space);
        $this->assertSame(['w0', 'w1', 'w2'], $first, 'the three frames the proxy let through, executed once');
        $this->assertSame([], \array_intersect($first, $failedOver), 'no write applied on both instances');
        $this->assertSame(\array_unique($failedOver), $failedOver);
        $maybe = \array_keys($outcomes, 'maybe', true);
        $this->assertSame(\range(0, \count($maybe) - 1), $maybe, 'maybe sent: a prefix of the batch, rethrown');
        $this->assertGreaterThan(self::EXECUTED, \count($maybe));
        $sent = \array_map(static fn (int $i) => "w$i", \array_keys($outcomes, 'ok', true));
        $this->assertNotSame([], $sent, 'some frames were never written');
        $this->assertSame($sent, $failedOver, 'exactly the never-written writes moved to the other instance');
    }

    public function testOnlyDeclaredIdempotentCallsAreReplayedWhenMaybeSent(): void
    {
        $space = $this->createLedger(static::$server, 703);
        $this->admin()->evaluate(<<<LUA
            function ledger_put(id, payload) box.space[$space]:replace{id, payload, ''} return id end
            LUA);
        foreach ([false, true] as $idempotent) {
            // The cut comes right after the whole CALL frame reached the server.
            $proxy = $this->started[] = new CutProxy(static::$server, ['cut_after_frames' => 2, 'cut_extra_bytes' => 0]);
            $attempts = [];
            $client = Client::connect($proxy->uri(), ['read_timeout' => 5])
                ->withMiddleware(new RetryMiddleware(maxRetries: 2, baseDelay: 0.01), self::recorder($attempts));
            $client->ping();
            $id = $idempotent ? 2 : 1;
            try {
                $result = $client->call('ledger_put', [$id, "w$id"], idempotent: $idempotent);
                $this->assertTrue($idempotent, 'a plain CALL whose reply was lost must not be replayed');
                $this->assertSame([$id], $result);
            } catch (ConnectionException $e) {
                $this->assertFalse($idempotent, 'declared idempotent: replayed on a new connection');
                $this->assertTrue($e->maybeSent());
            }
            $proxy->expect('cut ');
        }
        // The CALL frames reached the server before the cut either way, so both are stored once.
        $this->assertSame(['w1', 'w2'], self::payloads(static::$server, $space));
        $this->assertSame(['maybe', 'ok'], $attempts['w2'] ?? null);
    }

    /** Inserts w0..w199 from one Fiber each, so they go out as one batch of frames. @return list<string> */
    private function writeBatch(Client $client, int $space): array
    {
        $pad = \str_repeat('x', self::PAD);
        return Scheduler::run(static function () use ($client, $space, $pad): array {
            $tasks = [];
            for ($i = 0; $i < self::WRITES; $i++) {
                $tasks[] = Scheduler::spawn(static function () use ($client, $space, $pad, $i): string {
                    try {
                        $client->insert($space, [null, "w$i", $pad]);
                        return 'ok';
                    } catch (ConnectionException $e) {
                        return $e->requestSent ? 'maybe' : 'not';
                    }
                });
            }
            return Future::all($tasks);
        });
    }

    /** Where the proxy cuts: after the first frame, EXECUTED inserts and 10 bytes. */
    private function cutOffset(int $space): int
    {
        $encoder = new \Ferry\Tarantool\Protocol\Encoder(new \Ferry\Tarantool\Codec\PureCodec());
        $ping = \strlen($encoder->frame(Iproto::PING, 1, 0, []));
        $bytes = $ping + 10;
        for ($i = 0; $i < self::EXECUTED; $i++) {
            $bytes += \strlen($encoder->frame(Iproto::INSERT, 2 + $i, 0, [Iproto::SPACE_ID => $space, Iproto::TUPLE => [null, "w$i", \str_repeat('x', self::PAD)]]));
        }
        return $bytes;
    }

    /**
     * Records what each attempt of each write was told, from inside the retry loop.
     * @param array<string, list<string>> $log payload => outcomes
     */
    private static function recorder(array &$log): Middleware
    {
        return new class ($log) implements Middleware {
            /** @param array<string, list<string>> $log */
            public function __construct(private array &$log)
            {
            }

            public function process(Request $request, Handler $next): Response
            {
                $key = $request->body[Iproto::TUPLE][1] ?? null;
                try {
                    $response = $next->handle($request);
                    if (\is_string($key)) {
                        $this->log[$key][] = 'ok';
                    }
                    return $response;
                } catch (ConnectionException $e) {
                    if (\is_string($key)) {
                        $this->log[$key][] = $e->requestSent ? 'maybe' : 'not';
                    }
                    throw $e;
                }
            }
        };
    }

    private function admin(?TarantoolServer $server = null): Client
    {
        return Client::connect(($server ?? static::$server)->uri(), ['read_timeout' => 10]);
    }

    private function createLedger(TarantoolServer $server, int $id): int
    {
        $this->admin($server)->evaluate(<<<LUA
            local s = box.schema.space.create('ledger$id', {id = $id, format = {
                {name = 'id', type = 'unsigned'}, {name = 'payload', type = 'string'}, {name = 'pad', type = 'string'},
            }})
            s:create_index('pk', {sequence = true})
            LUA);
        return $id;
    }

    /** @return list<string> payloads in primary key (insertion) order, duplicates kept */
    private static function payloads(TarantoolServer $server, int $space): array
    {
        return Client::connect($server->uri())->evaluate(<<<LUA
            local out = {}
            for _, t in box.space[$space]:pairs() do table.insert(out, t[2]) end
            return out
            LUA)[0];
    }
}
