<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests\Support;

/**
 * Runs cut-proxy.php (a separate PHP process) in front of a real Tarantool: it breaks the
 * first client connection after N request frames plus some bytes of the next, or holds frame K
 * until a Lua chunk ran on a second connection. See that script for the details.
 */
final class CutProxy
{
    /** @var resource */
    private $proc;
    /** @var array<int, resource> */
    private array $pipes = [];
    public readonly int $port;

    /** @param array<string, mixed> $config cut_after_frames, cut_extra_bytes, hold_before_frame, eval, eval_uri */
    public function __construct(TarantoolServer $upstream, array $config)
    {
        $config['upstream'] = '127.0.0.1:' . $upstream->port;
        $this->proc = \proc_open(
            [\PHP_BINARY, __DIR__ . '/cut-proxy.php', \json_encode($config, \JSON_THROW_ON_ERROR)],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']],
            $this->pipes,
        );
        $this->port = (int) \substr($this->expect('port '), 5);
    }

    /** A URI through the proxy; no credentials by default, so the first frame is the first request. */
    public function uri(?string $credentials = null): string
    {
        return 'tcp://' . ($credentials !== null ? $credentials . '@' : '') . '127.0.0.1:' . $this->port;
    }

    /** Waits for the proxy's next report, which must start with $prefix ("cut ", "held "). */
    public function expect(string $prefix, float $timeout = 10.0): string
    {
        $r = [$this->pipes[1]];
        $w = $e = null;
        if (!@\stream_select($r, $w, $e, (int) $timeout, (int) (($timeout - (int) $timeout) * 1e6))) {
            throw new \RuntimeException("cut proxy: no '$prefix' report within $timeout s");
        }
        $line = \rtrim((string) \fgets($this->pipes[1]));
        if (!\str_starts_with($line, $prefix)) {
            throw new \RuntimeException("cut proxy: expected '$prefix...', got '$line'");
        }
        return $line;
    }

    public function stop(): void
    {
        if (!\is_resource($this->proc)) {
            return;
        }
        $status = \proc_get_status($this->proc);
        if ($status['running']) {
            \posix_kill($status['pid'], \SIGKILL);
        }
        foreach ($this->pipes as $pipe) {
            @\fclose($pipe);
        }
        \proc_close($this->proc);
    }

    public function __destruct()
    {
        $this->stop();
    }
}
