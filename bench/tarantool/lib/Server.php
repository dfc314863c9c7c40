<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

/**
 * The benchmark's Tarantool, configured for measuring: WAL off, 1 MiB readahead, a temporary
 * memtx space {id unsigned (sequence), name string} filled with 10,000 tuples.
 */
final class Server
{
    public const SPACE_ID = 512;
    public const TUPLES = 10000;

    /** @var resource|null */
    private $proc = null;
    private string $dir;
    public readonly int $port;
    private int $owner;

    public function __construct()
    {
        $this->dir = \sys_get_temp_dir() . '/ferry-bench-tt-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700, true);
        $s = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($s, false);
        \fclose($s);
        $this->port = (int) \substr($name, \strrpos($name, ':') + 1);
        $this->owner = \getmypid();
        \register_shutdown_function(function (): void {
            // Forked benchmark workers inherit this; only the parent may stop the server.
            if (\getmypid() === $this->owner) {
                $this->stop();
            }
        });
    }

    public function start(): void
    {
        $n = self::TUPLES;
        $id = self::SPACE_ID;
        $lua = <<<LUA
            box.cfg{
                listen = '127.0.0.1:{$this->port}', work_dir = '{$this->dir}', log = '{$this->dir}/tarantool.log',
                wal_mode = 'none', readahead = 1024 * 1024, memtx_memory = 512 * 1024 * 1024,
                net_msg_max = 4096,
            }
            box.schema.user.grant('guest', 'read,write,execute', 'universe', nil, {if_not_exists = true})
            local s = box.schema.space.create('bench', {id = $id, temporary = true})
            s:create_index('primary', {type = 'tree', parts = {1, 'unsigned'}, sequence = true})
            s:format({{name = 'id', type = 'unsigned'}, {name = 'name', type = 'string', is_nullable = false}})
            function bench_refill()
                box.space.bench:truncate()
                for i = 1, $n do box.space.bench:replace{i, 'tuple_' .. i} end
                box.sequence.bench_seq:set($n)
            end
            function bench_func() return true end
            bench_refill()
            local f = io.open('{$this->dir}/ready', 'w') f:write('ok') f:close()
            LUA;
        \file_put_contents($this->dir . '/init.lua', $lua);
        $this->proc = \proc_open(['tarantool', $this->dir . '/init.lua'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', $this->dir . '/stderr.log', 'w']], $pipes, $this->dir);
        $deadline = \microtime(true) + 20;
        while (!\is_file($this->dir . '/ready')) {
            if (\microtime(true) > $deadline || !\proc_get_status($this->proc)['running']) {
                throw new \RuntimeException('tarantool did not start: ' . @\file_get_contents($this->dir . '/tarantool.log'));
            }
            \usleep(20000);
        }
    }

    public function uri(): string
    {
        return 'tcp://127.0.0.1:' . $this->port;
    }

    public function stop(): void
    {
        if ($this->proc !== null) {
            \proc_terminate($this->proc, \SIGKILL);
            \proc_close($this->proc);
            $this->proc = null;
        }
        foreach ((array) \glob($this->dir . '/*') as $f) {
            @\unlink((string) $f);
        }
        @\rmdir($this->dir);
    }
}
