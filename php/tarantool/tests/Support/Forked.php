<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Tests\Support;

/**
 * A closure run in a pcntl_fork()ed child while the test goes on in the parent; what it
 * returns (or the error it throws) comes back as JSON through a socket pair.
 */
final class Forked
{
    private bool $reaped = false;

    /** @param resource $pipe */
    private function __construct(public readonly int $pid, private $pipe)
    {
    }

    public static function run(\Closure $child): self
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            throw new \RuntimeException('No socket pair');
        }
        $pid = \pcntl_fork();
        if ($pid === -1) {
            throw new \RuntimeException('pcntl_fork() failed');
        }
        if ($pid === 0) {
            \fclose($pair[0]);
            try {
                $out = ['value' => $child()];
            } catch (\Throwable $e) {
                $out = ['error' => \sprintf('%s: %s at %s:%d', $e::class, $e->getMessage(), $e->getFile(), $e->getLine())];
            }
            \fwrite($pair[1], (string) \json_encode($out, \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_PARTIAL_OUTPUT_ON_ERROR));
            \fclose($pair[1]);
            // Not exit(): the rest of the suite, PHPUnit's shutdown and the test servers'
            // shutdown functions (which stop tarantool) belong to the parent.
            \posix_kill(\getmypid(), \SIGKILL);
        }
        \fclose($pair[1]);
        return new self($pid, $pair[0]);
    }

    /** Waits for the child's answer; throws what the child threw. */
    public function result(float $timeout = 30.0): mixed
    {
        \stream_set_timeout($this->pipe, (int) $timeout);
        $json = (string) \stream_get_contents($this->pipe);
        $this->reap();
        $out = \json_decode($json, true);
        if (!\is_array($out)) {
            throw new \RuntimeException('The child ended without an answer: ' . \var_export($json, true));
        }
        if (isset($out['error'])) {
            throw new \RuntimeException('The child failed: ' . $out['error']);
        }
        return $out['value'] ?? null;
    }

    private function reap(): void
    {
        if (!$this->reaped) {
            $this->reaped = true;
            \posix_kill($this->pid, \SIGKILL);
            \pcntl_waitpid($this->pid, $status);
            \fclose($this->pipe);
        }
    }

    public function __destruct()
    {
        $this->reap();
    }
}
