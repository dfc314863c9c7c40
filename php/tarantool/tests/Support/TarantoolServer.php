<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests\Support;

/**
 * A real tarantool process in a temp dir on a free port. Every started server is killed at
 * shutdown too, so a failing or fatal-erroring test leaves nothing running.
 */
final class TarantoolServer
{
    public const UNIX = 'unix';

    /** @var array<int, self> */
    private static array $live = [];
    private static bool $shutdownRegistered = false;

    /** @var resource|null */
    private $proc = null;
    public readonly string $dir;
    public readonly int $port;
    public readonly string $socketPath;

    /**
     * @param array<string, string> $cfg extra box.cfg entries as Lua expressions
     * @param string $lua run after box.cfg and the grants (spaces, functions, users)
     */
    public function __construct(private readonly array $cfg = [], private readonly string $lua = '')
    {
        $this->dir = \sys_get_temp_dir() . '/ferry-tt-' . \bin2hex(\random_bytes(5));
        \mkdir($this->dir, 0700, true);
        $this->port = self::freePort();
        $this->socketPath = $this->dir . '/tt.sock';
        if (!self::$shutdownRegistered) {
            self::$shutdownRegistered = true;
            \register_shutdown_function(static function (): void {
                foreach (self::$live as $server) {
                    $server->stop();
                }
            });
        }
    }

    /** @param array<string, string> $cfg @return self started */
    public static function start(array $cfg = [], string $lua = ''): self
    {
        $s = new self($cfg, $lua);
        $s->run();
        return $s;
    }

    public function uri(?string $credentials = 'test:secret'): string
    {
        return 'tcp://' . ($credentials !== null ? $credentials . '@' : '') . '127.0.0.1:' . $this->port;
    }

    /** Only meaningful when started with ['listen' => TarantoolServer::UNIX]. */
    public function unixUri(?string $credentials = 'test:secret'): string
    {
        return 'unix://' . ($credentials !== null ? $credentials . '@' : '') . $this->socketPath;
    }

    public function run(): void
    {
        $cfg = [
            'listen' => "'127.0.0.1:{$this->port}'",
            'work_dir' => "'{$this->dir}'",
            'memtx_memory' => '64 * 1024 * 1024',
            'log' => "'{$this->dir}/tarantool.log'",
            'wal_mode' => "'none'",
            'readahead' => '1024 * 1024',
        ];
        $pairs = [];
        $all = $this->cfg + $cfg;
        if ($all['listen'] === self::UNIX) {
            $all['listen'] = "'{$this->socketPath}'";
        }
        foreach ($all as $k => $v) {
            $pairs[] = "    $k = $v,";
        }
        $init = "box.cfg{\n" . \implode("\n", $pairs) . "\n}\n" . <<<LUA
            box.once('ferry_test_users', function()
                box.schema.user.create('test', {password = 'secret', if_not_exists = true})
                box.schema.user.grant('test', 'read,write,execute,create,drop,alter', 'universe', nil, {if_not_exists = true})
                box.schema.user.grant('guest', 'read,write,execute', 'universe', nil, {if_not_exists = true})
            end)
            {$this->lua}
            local f = io.open('{$this->dir}/ready', 'w'); f:write('ok'); f:close()
            LUA;
        \file_put_contents($this->dir . '/init.lua', $init);
        @\unlink($this->dir . '/ready');
        $this->proc = \proc_open(
            ['tarantool', $this->dir . '/init.lua'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->dir . '/stdout.log', 'a'], 2 => ['file', $this->dir . '/stdout.log', 'a']],
            $pipes,
            $this->dir,
        );
        if (!\is_resource($this->proc)) {
            throw new \RuntimeException('Cannot start tarantool');
        }
        self::$live[\spl_object_id($this)] = $this;
        $deadline = \microtime(true) + 15;
        while (!\is_file($this->dir . '/ready')) {
            if (!\proc_get_status($this->proc)['running']) {
                throw new \RuntimeException("tarantool exited during startup:\n" . $this->log());
            }
            if (\microtime(true) > $deadline) {
                $this->stop();
                throw new \RuntimeException("tarantool did not become ready in 15 s:\n" . $this->log());
            }
            \usleep(20000);
        }
    }

    public function pid(): int
    {
        return $this->proc ? \proc_get_status($this->proc)['pid'] : 0;
    }

    public function isRunning(): bool
    {
        return $this->proc !== null && \proc_get_status($this->proc)['running'];
    }

    /** SIGKILL, as in a crash. */
    public function kill(): void
    {
        if ($this->proc !== null) {
            $pid = $this->pid();
            if ($this->isRunning()) {
                \posix_kill($pid, \SIGKILL);
            }
            \proc_close($this->proc);
            $this->proc = null;
        }
        unset(self::$live[\spl_object_id($this)]);
    }

    /** SIGSTOP / SIGCONT: the server keeps its sockets but answers nothing. */
    public function pause(): void
    {
        \posix_kill($this->pid(), \SIGSTOP);
    }

    public function resume(): void
    {
        \posix_kill($this->pid(), \SIGCONT);
    }

    public function stop(): void
    {
        if ($this->proc !== null) {
            $this->resume();
            $this->kill();
        }
        if (\is_dir($this->dir)) {
            foreach ((array) \glob($this->dir . '/{,.}*', \GLOB_BRACE) as $f) {
                if (!\is_dir((string) $f)) {
                    @\unlink((string) $f); // files, and the unix socket when listening on one
                }
            }
            @\rmdir($this->dir);
        }
    }

    public function log(): string
    {
        return (string) @\file_get_contents($this->dir . '/tarantool.log') . (string) @\file_get_contents($this->dir . '/stdout.log');
    }

    public static function freePort(): int
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($server === false) {
            throw new \RuntimeException("No free port: $errstr");
        }
        $name = (string) \stream_socket_get_name($server, false);
        \fclose($server);
        return (int) \substr($name, \strrpos($name, ':') + 1);
    }
}
