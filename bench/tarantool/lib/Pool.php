<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\StreamSelectLoop;
use Ferry\Tarantool\Client;

/**
 * P forked worker processes, each with its own connection, kept alive across iterations and
 * driven over socket pairs, so an iteration's time excludes fork and connect.
 */
final class Pool
{
    /** @var list<resource> */
    private array $channels = [];
    /** @var list<int> */
    private array $pids = [];

    /** @param \Closure(): Client $connect called in each child */
    public function __construct(public readonly int $size, \Closure $connect)
    {
        if (!\function_exists('pcntl_fork')) {
            throw new \RuntimeException('multi-process mode needs ext-pcntl');
        }
        for ($p = 0; $p < $size; $p++) {
            [$parentEnd, $childEnd] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
            $pid = \pcntl_fork();
            if ($pid === -1) {
                throw new \RuntimeException('fork failed');
            }
            if ($pid === 0) {
                \fclose($parentEnd);
                foreach ($this->channels as $c) {
                    \fclose($c);
                }
                self::child($childEnd, $connect, $p, $size);
            }
            \fclose($childEnd);
            $this->channels[] = $parentEnd;
            $this->pids[] = $pid;
        }
    }

    /** Runs $op for $revolutions split over the processes, each with $fibers Fibers (0: sync). */
    public function run(string $op, int $revolutions, int $fibers): float
    {
        $t = \hrtime(true);
        foreach ($this->channels as $ch) {
            \fwrite($ch, "run $op $revolutions $fibers\n");
        }
        foreach ($this->channels as $p => $ch) {
            $line = \fgets($ch);
            if ($line === false || !\str_starts_with($line, 'done')) {
                throw new \RuntimeException("worker $p failed: " . \trim((string) $line));
            }
        }
        return (\hrtime(true) - $t) / 1e9;
    }

    public function close(): void
    {
        foreach ($this->channels as $ch) {
            @\fwrite($ch, "quit\n");
            @\fclose($ch);
        }
        foreach ($this->pids as $pid) {
            \pcntl_waitpid($pid, $status);
        }
        $this->channels = $this->pids = [];
    }

    /** @param resource $ch */
    private static function child($ch, \Closure $connect, int $index, int $size): never
    {
        $code = 0;
        try {
            Loop::set(new StreamSelectLoop());
            \mt_srand(\random_int(1, \PHP_INT_MAX));
            $client = $connect();
            $ops = Ops::all();
            while (($line = \fgets($ch)) !== false) {
                $cmd = \explode(' ', \trim($line));
                if ($cmd[0] !== 'run') {
                    break;
                }
                [, $op, $revs, $fibers] = $cmd;
                // This process takes revolutions $index, $index + P, ... so deletes stay disjoint.
                $fibers = (int) $fibers;
                $fibers === 0
                    ? Runner::sync($client, $ops[$op], $index, (int) $revs, $size)
                    : Runner::fibers($client, $ops[$op], $fibers, $index, (int) $revs, $size);
                \fwrite($ch, "done\n");
            }
        } catch (\Throwable $e) {
            @\fwrite($ch, 'error ' . \str_replace("\n", ' ', $e->getMessage()) . "\n");
            $code = 1;
        }
        // Skip the parent's shutdown functions and destructors inherited through fork.
        \posix_kill(\getmypid(), $code === 0 ? \SIGKILL : \SIGTERM);
        exit($code);
    }
}
