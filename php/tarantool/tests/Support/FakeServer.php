<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests\Support;

/**
 * A separate PHP process listening on a free port that writes $banner to every client and
 * then holds the connection open without answering: a peer that is not (or no longer) a
 * working Tarantool.
 */
final class FakeServer
{
    /** @var resource */
    private $proc;
    public readonly int $port;

    public function __construct(string $banner)
    {
        $this->port = TarantoolServer::freePort();
        $code = \sprintf(
            '$s = stream_socket_server("tcp://127.0.0.1:%d", $e, $es); echo "up\n"; $keep = [];'
            . ' while ($c = @stream_socket_accept($s, 30)) { fwrite($c, base64_decode("%s")); $keep[] = $c; }',
            $this->port,
            \base64_encode($banner),
        );
        $this->proc = \proc_open([\PHP_BINARY, '-r', $code], [1 => ['pipe', 'w']], $pipes);
        \fgets($pipes[1]); // "up": listening
    }

    public function uri(): string
    {
        return 'tcp://127.0.0.1:' . $this->port;
    }

    public function __destruct()
    {
        $pid = \proc_get_status($this->proc)['pid'];
        \posix_kill($pid, \SIGKILL);
        \proc_close($this->proc);
    }
}
