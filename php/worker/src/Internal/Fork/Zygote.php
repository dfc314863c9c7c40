<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fork;

use Ferry\Worker\Relay\StreamRelay;

/**
 * @internal The fork-server (pool.boot: fork), PHP's side.
 *
 * The server starts the worker script with FERRY_RELAY=zygote:unix:///path. The script
 * boots the application as usual; when it hands control to the SDK (the handshake that
 * run() and the framework runners start with), serve() connects to that socket and from
 * then on only forks: each request carries a child's relay pipes and log pipe (SCM_RIGHTS)
 * and the environment it sets. serve() returns in each child, which then goes on with the
 * handshake as a worker; the zygote itself never returns. It reaps its children and reports
 * their exit status, and exits when the server closes the socket.
 */
final class Zygote
{
    private const MAX_FDS = 8;
    /**
     * What every worker loads after its handshake: loaded here, it is shared by all of them
     * instead of being compiled into each one's memory on every respawn.
     */
    private const WORKER_CLASSES = [
        \Ferry\Worker\Frame::class, \Ferry\Worker\Job::class, \Ferry\Worker\Payload::class,
        \Ferry\Worker\Http\Request::class, \Ferry\Worker\Http\Response::class,
        \Ferry\Worker\Http\StreamedAnswer::class, \Ferry\Worker\Internal\FatalAnswer::class,
        \Ferry\Worker\Internal\JobFrames::class, \Ferry\Worker\Internal\SequentialRunner::class,
        \Ferry\Worker\Internal\Native\NativeLoop::class, \Ferry\Worker\Internal\Native\NativeFibers::class,
        \Ferry\Worker\Internal\Fiber\FiberRunner::class, \Ferry\Worker\Loop::class,
        \Ferry\Worker\Relay\RelayException::class, \Ferry\Worker\Relay\RelayClosedException::class,
        Output::class, Mold::class,
    ];
    private static bool $mold = false;

    /**
     * @param bool $mold a worker's fork (pool.refork_after), not the booted script: it ends
     *                   without PHP's shutdown, whose destructors would close the worker's
     *                   connections, which it shares
     */
    public static function serve(StreamRelay $relay, string $path, ?string $token, bool $mold = false): void
    {
        self::$mold = $mold;
        if (!\function_exists('pcntl_fork') || !\function_exists('socket_recvmsg')) {
            self::fail('pool.boot: fork needs PHP\'s pcntl and sockets extensions, and this PHP lacks '
                . (\function_exists('pcntl_fork') ? 'sockets' : 'pcntl') . '; install them or set pool.boot: exec');
        }
        $before = BootSockets::inodes();
        $socket = @socket_create(\AF_UNIX, \SOCK_SEQPACKET, 0);
        if ($socket === false || !@socket_connect($socket, $path)) {
            self::fail("the zygote cannot connect to the server's socket $path: " . socket_strerror(socket_last_error()));
        }
        $shared = BootSockets::describeShared(array_diff(BootSockets::inodes(), $before), $mold);
        if ($shared !== null) {
            self::send($socket, ['error' => $shared]);
            self::end(1);
        }
        foreach (self::WORKER_CLASSES as $class) {
            class_exists($class);
        }
        Output::prepare();
        // What the boot left for the collector would otherwise be collected once in every child.
        gc_collect_cycles();
        self::send($socket, ['zygote' => getmypid(), 'token' => $token]);

        $async = pcntl_async_signals(true);
        $sigchld = pcntl_signal_get_handler(\SIGCHLD);
        // Without SA_RESTART, so that a child's exit interrupts the wait for requests.
        pcntl_signal(\SIGCHLD, static function (): void {}, false);
        while (true) {
            self::reap($socket);
            $message = ['name' => [], 'buffer_size' => 65536, 'controllen' => socket_cmsg_space(\SOL_SOCKET, \SCM_RIGHTS, self::MAX_FDS)];
            $n = @socket_recvmsg($socket, $message, 0);
            if ($n === false && self::interrupted($socket)) {
                continue;
            }
            if (!\is_int($n) || $n === 0) {
                self::end(0); // the server closed the socket: this generation is over
            }
            $fds = [];
            foreach ($message['control'] ?? [] as $control) {
                if (($control['level'] ?? null) === \SOL_SOCKET && ($control['type'] ?? null) === \SCM_RIGHTS) {
                    $fds = array_merge($fds, $control['data']);
                }
            }
            $request = json_decode($message['iov'][0] ?? '', true);
            if (\is_array($request) && !empty($request['output']) && \count($fds) === 1) {
                // A mold's own log pipe, in place of the worker's it was forked with.
                Output::redirect($fds[0]);
                continue;
            }
            $id = \is_array($request) ? (int) ($request['fork'] ?? 0) : 0;
            if ($id <= 0 || \count($fds) !== 3) {
                self::close($fds);
                self::send($socket, ['forked' => max($id, 1), 'error' => 'a fork request needs an id and three descriptors']);
                continue;
            }
            $pid = pcntl_fork();
            if ($pid === 0) {
                socket_close($socket);
                pcntl_signal(\SIGCHLD, $sigchld ?? \SIG_DFL);
                pcntl_async_signals($async);
                self::becomeWorker($relay, $fds, \is_array($request['env'] ?? null) ? $request['env'] : []);

                return;
            }
            self::close($fds);
            if ($pid < 0) {
                self::send($socket, ['forked' => $id, 'error' => pcntl_strerror(pcntl_get_last_error())]);
                continue;
            }
            self::send($socket, ['forked' => $id, 'pid' => $pid]);
        }
    }

    /**
     * @param list<resource> $fds the relay's read and write ends, then the log pipe
     * @param array<string, mixed> $env
     */
    private static function becomeWorker(StreamRelay $relay, array $fds, array $env): void
    {
        foreach ($env as $name => $value) {
            if (\is_string($name) && \is_string($value)) {
                putenv("$name=$value");
            }
        }
        // Every child starts with the zygote's generator state: each draws its own seed.
        mt_srand();
        Output::redirect($fds[2]);
        $relay->adopt($fds[0], $fds[1]);
    }

    /** Reports the children that have exited, with their status as the server words it. */
    private static function reap(\Socket $socket): void
    {
        while (($pid = pcntl_waitpid(-1, $status, \WNOHANG)) > 0) {
            if (pcntl_wifexited($status)) {
                $text = 'exit status ' . pcntl_wexitstatus($status);
            } elseif (pcntl_wifsignaled($status)) {
                $text = 'signal: ' . self::signalName(pcntl_wtermsig($status));
            } else {
                continue;
            }
            self::send($socket, ['exit' => $pid, 'status' => $text]);
        }
    }

    private static function signalName(int $signal): string
    {
        return match ($signal) {
            \SIGKILL => 'killed',
            \SIGTERM => 'terminated',
            \SIGSEGV => 'segmentation fault',
            \SIGABRT => 'aborted',
            \SIGINT => 'interrupt',
            \SIGBUS => 'bus error',
            default => "signal $signal",
        };
    }

    /** @param array<string, mixed> $message */
    private static function send(\Socket $socket, array $message): void
    {
        $bytes = json_encode($message, \JSON_INVALID_UTF8_SUBSTITUTE);
        while (@socket_send($socket, $bytes, \strlen($bytes), 0) === false) {
            if (!self::interrupted($socket)) {
                self::end(0); // the server has gone
            }
        }
    }

    /** Whether the last call failed with EINTR (socket_recvmsg() records it globally only). */
    private static function interrupted(\Socket $socket): bool
    {
        $error = socket_last_error($socket) ?: socket_last_error();
        socket_clear_error($socket);
        socket_clear_error();

        return $error === \SOCKET_EINTR;
    }

    /** @param list<mixed> $fds */
    private static function close(array $fds): void
    {
        foreach ($fds as $fd) {
            if (\is_resource($fd)) {
                fclose($fd);
            } elseif ($fd instanceof \Socket) {
                socket_close($fd);
            }
        }
    }

    private static function fail(string $message): never
    {
        fwrite(\STDERR, "ferry: $message\n");
        self::end(1);
    }

    private static function end(int $status): never
    {
        if (self::$mold) {
            posix_kill(getmypid(), \SIGKILL);
        }
        exit($status);
    }
}
