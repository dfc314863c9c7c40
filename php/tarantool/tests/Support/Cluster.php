<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests\Support;

use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Client;

/**
 * A real replica set of tarantool processes: node 0 bootstraps as the read-write master, the
 * others join it read-only and replicate from it alone (a star). Replicas learn of each other
 * only when one is promoted (see promote()), so which rows each one has at the crash depends
 * on the master alone.
 */
final class Cluster
{
    /** @var list<TarantoolServer> */
    public readonly array $nodes;
    /** @var array<int, Client> */
    private array $admins = [];

    /** @param list<TarantoolServer> $nodes */
    private function __construct(array $nodes)
    {
        $this->nodes = $nodes;
    }

    /**
     * @param array<string, string> $cfg box.cfg entries (Lua expressions) for every node
     * @param string $masterLua run once on the master (schema; it replicates)
     * @param string $everyNodeLua run on every node at start (functions, local data)
     */
    public static function start(int $size, array $cfg, string $masterLua, string $everyNodeLua = ''): self
    {
        $cfg += ['wal_mode' => "'write'", 'replication_timeout' => '0.2'];
        $master = TarantoolServer::start($cfg, <<<LUA
            box.once('ferry_cluster', function()
                box.schema.user.grant('test', 'replication', nil, nil, {if_not_exists = true})
                $masterLua
            end)
            $everyNodeLua
            LUA);
        $nodes = [$master];
        try {
            for ($i = 1; $i < $size; $i++) {
                $nodes[] = TarantoolServer::start($cfg + [
                    'replication' => "'test:secret@127.0.0.1:{$master->port}'",
                    'read_only' => 'true',
                ], $everyNodeLua);
            }
            $cluster = new self($nodes);
            $cluster->waitFor(fn () => $cluster->upstreamsFollowing(), 10, 'replicas following the master');
            return $cluster;
        } catch (\Throwable $e) {
            foreach ($nodes as $n) {
                $n->stop();
            }
            throw $e;
        }
    }

    /** @return list<string> */
    public function uris(string $credentials = 'test:secret'): array
    {
        return \array_map(static fn (TarantoolServer $s) => $s->uri($credentials), $this->nodes);
    }

    /** A plain connection to one node, for setup and inspection outside the code under test. */
    public function admin(int $i): Client
    {
        return $this->admins[$i] ??= Client::connect($this->nodes[$i]->uri(), ['connect_timeout' => 2, 'read_timeout' => 10]);
    }

    /** box.info.id of each node, by index. @return array<int, int> */
    public function ids(): array
    {
        $ids = [];
        foreach (\array_keys($this->nodes) as $i) {
            $ids[$i] = $this->admin($i)->evaluate('return box.info.id')[0];
        }
        return $ids;
    }

    /** SIGKILL, as in a crash; the node's admin connection goes with it. */
    public function kill(int $i): void
    {
        $this->nodes[$i]->kill();
        $this->admins[$i]?->close();
        unset($this->admins[$i]);
    }

    /**
     * Cuts node $i off from the others the way a network partition would, through Tarantool
     * itself: no node replicates from it any more, so its new rows reach nobody while it goes
     * on serving its clients.
     */
    public function isolate(int $i): void
    {
        foreach (\array_keys($this->nodes) as $j) {
            if ($j !== $i && $this->nodes[$j]->isRunning()) {
                $this->admin($j)->evaluate(<<<'LUA'
                    local port, keep = ..., {}
                    local list = box.cfg.replication or {}
                    for _, uri in ipairs(type(list) == 'table' and list or {list}) do
                        if not uri:find(':' .. port, -#port - 1, true) then table.insert(keep, uri) end
                    end
                    box.cfg{replication = keep}
                    LUA, [(string) $this->nodes[$i]->port]);
            }
        }
    }

    /**
     * Of the running nodes in $candidates, the one that received most of instance $instanceId's
     * rows (box.info.vclock): the only safe choice after that instance died, since with a quorum
     * smaller than the set, a write acknowledged to a client may exist on one replica only.
     *
     * @param list<int> $candidates
     */
    public function mostAdvanced(array $candidates, int $instanceId): int
    {
        $best = null;
        $bestLsn = -1;
        foreach ($candidates as $i) {
            $lsn = (int) ($this->admin($i)->evaluate('return box.info.vclock[...] or 0', [$instanceId])[0] ?? 0);
            if ($lsn > $bestLsn) {
                [$best, $bestLsn] = [$i, $lsn];
            }
        }
        if ($best === null) {
            throw new \LogicException('no candidate to promote');
        }
        return $best;
    }

    /**
     * Makes node $i the master after instance $deadId (the old master) died, the way Tarantool
     * 2.6 allows (no box.ctl.promote, no elections):
     *  1. the nodes in $followers replicate from node $i, and it waits until each has every row
     *     of the dead master that it has;
     *  2. box.ctl.clear_synchro_queue() finishes the dead master's synchronous transactions left
     *     in node $i's queue: 2.6.0 waits up to 2 x replication_synchro_timeout for their
     *     CONFIRM or ROLLBACK, then settles the rest itself. Run before step 1, on a node no
     *     replica followed yet, it rolled back writes the old master had confirmed to clients
     *     (FailoverTest, about one partition run in three);
     *  3. box.cfg{read_only = false}.
     *
     * @param list<int> $followers
     * @return float seconds the promotion took
     */
    public function promote(int $i, int $deadId, array $followers, float $queueWait = 0.25): float
    {
        $t = \microtime(true);
        $new = $this->admin($i);
        $new->evaluate('box.cfg{replication = {}}'); // stop retrying the dead master
        $ids = [];
        foreach ($followers as $f) {
            $this->admin($f)->evaluate('box.cfg{replication = {...}}', [$this->replicationUri($i)]);
            $ids[] = $this->admin($f)->evaluate('return box.info.id')[0];
        }
        $this->waitFor(static fn () => $new->evaluate(<<<'LUA'
            local dead, followers = ...
            local have = box.info.vclock[dead] or 0
            for _, id in ipairs(followers) do
                local d = box.info.replication[id] and box.info.replication[id].downstream
                if d == nil or d.vclock == nil or (d.vclock[dead] or 0) < have then return false end
            end
            return true
            LUA, [$deadId, $ids])[0], 10, 'followers catching up with the new master');
        $new->evaluate(<<<'LUA'
            local wait = ...
            local saved = box.cfg.replication_synchro_timeout
            box.cfg{replication_synchro_timeout = wait}
            box.ctl.clear_synchro_queue()
            box.cfg{replication_synchro_timeout = saved}
            box.cfg{read_only = false}
            LUA, [$queueWait]);
        return \microtime(true) - $t;
    }

    public function stop(): void
    {
        foreach ($this->admins as $c) {
            $c->close();
        }
        $this->admins = [];
        foreach ($this->nodes as $n) {
            $n->stop();
        }
    }

    /** The last lines of every node's log, for failure messages. */
    public function logs(int $lines = 30): string
    {
        $out = '';
        foreach ($this->nodes as $i => $n) {
            $out .= "--- node $i\n" . \implode("\n", \array_slice(\explode("\n", \trim($n->log())), -$lines)) . "\n";
        }
        return $out;
    }

    public function waitFor(\Closure $condition, float $seconds, string $what): void
    {
        $deadline = \microtime(true) + $seconds;
        while (!$condition()) {
            if (\microtime(true) > $deadline) {
                throw new \RuntimeException("timed out after {$seconds} s waiting for $what\n" . $this->logs());
            }
            Scheduler::sleep(0.005); // only this Fiber waits, when called from one
        }
    }

    private function replicationUri(int $i): string
    {
        return "test:secret@127.0.0.1:{$this->nodes[$i]->port}";
    }

    /** Every running node follows each instance in its box.cfg.replication. */
    private function upstreamsFollowing(): bool
    {
        foreach (\array_keys($this->nodes) as $i) {
            if (!$this->nodes[$i]->isRunning()) {
                continue;
            }
            [$configured, $following] = $this->admin($i)->evaluate(<<<'LUA'
                local n = 0
                for id, r in pairs(box.info.replication) do
                    if id ~= box.info.id and r.upstream ~= nil and r.upstream.status == 'follow' then n = n + 1 end
                end
                local list = box.cfg.replication or {}
                return type(list) == 'table' and #list or 1, n
                LUA);
            if ($following < $configured) {
                return false;
            }
        }
        return true;
    }
}
