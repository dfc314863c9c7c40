<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\TimeoutException;
use Ferry\Tarantool\Protocol\Greeting;

/**
 * A blocking stream socket with per-call timeouts. Reads return whatever one recv() gives
 * (Connection does the framing), writes loop until everything is sent.
 */
final class Socket
{
    private const READ_CHUNK = 65536;

    /** @var resource */
    public $stream;
    /** Writes up to this size go out blocking: they fit in any send buffer the server drains. */
    private const SMALL_WRITE = 65536;
    /** Current stream timeout in seconds (read-only outside this class). */
    public float $timeout = -1.0;
    /**
     * Persistent socket key => the process that last opened or reused it. PHP's list of
     * persistent sockets is copied into a forked child, so stream_socket_client() there would
     * hand back the parent's live socket under the same key.
     * @var array<string, int>
     */
    private static array $persistentOwners = [];

    /** @param resource $stream */
    private function __construct($stream, public readonly ?Greeting $greeting, public readonly bool $reused)
    {
        $this->stream = $stream;
    }

    /**
     * Connects and reads the greeting. A reused persistent socket has no greeting to read; if it
     * holds unread bytes (a reply nobody collected) or was never authenticated, it is discarded.
     */
    public static function open(Options $o): self
    {
        $deadline = \microtime(true) + $o->connectTimeout;
        $key = $o->persistent ? $o->persistentAddress() : $o->address;
        $stream = self::connect($o, $key);
        if ($o->persistent) {
            $pid = \getmypid();
            $inherited = (self::$persistentOwners[$key] ?? $pid) !== $pid;
            self::$persistentOwners[$key] = $pid;
            // An inherited socket is not even peeked at: that could take a byte of the parent's.
            if (\ftell($stream) > 0) {
                if (!$inherited && self::isCleanReuse($stream, $o)) {
                    \stream_set_blocking($stream, true);
                    return new self($stream, null, true);
                }
                // Frees this process's descriptor and list entry only; no shutdown(), which
                // would also end the session of the parent that owns an inherited socket.
                \fclose($stream);
                $stream = self::connect($o, $key);
            }
        }
        $socket = new self($stream, null, false);
        try {
            $bytes = '';
            while (\strlen($bytes) < Greeting::SIZE) {
                $bytes .= $socket->read($deadline - \microtime(true), Greeting::SIZE - \strlen($bytes), $o->display);
            }
        } catch (ConnectionException $e) {
            $socket->close();
            throw new ConnectionException('No greeting from ' . $o->display . ': ' . $e->getMessage(), $o->display, false, $e);
        }
        $greeting = Greeting::parse($bytes);
        return new self($stream, $greeting, false);
    }

    /**
     * open() for a Fiber under the loop: the TCP handshake and the greeting are awaited by
     * suspending the Fiber, so the rest of the worker keeps running. Not for persistent sockets.
     */
    public static function openSuspending(Options $o, float $deadline): self
    {
        $context = \stream_context_create($o->unix ? [] : ['socket' => ['tcp_nodelay' => $o->tcpNoDelay]]);
        $errno = 0;
        $errstr = '';
        $stream = @\stream_socket_client($o->address, $errno, $errstr, $o->connectTimeout, \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT, $context);
        if ($stream === false) {
            throw new ConnectionException(\sprintf('Cannot connect to %s: %s', $o->display, $errstr !== '' ? $errstr : 'error ' . $errno), $o->display);
        }
        \stream_set_read_buffer($stream, 0);
        $socket = new self($stream, null, false);
        try {
            if (!Scheduler::awaitWritable($stream, \max(0.0, $deadline - \microtime(true)))) {
                throw new TimeoutException(\sprintf('Cannot connect to %s: timed out after %.3f s', $o->display, $o->connectTimeout), $o->display);
            }
            // Writable with no peer means the handshake failed (refused, unreachable).
            if (\stream_socket_get_name($stream, true) === false) {
                throw new ConnectionException(\sprintf('Cannot connect to %s: %s', $o->display, self::pendingError($stream)), $o->display);
            }
            $bytes = '';
            try {
                while (\strlen($bytes) < Greeting::SIZE) {
                    $bytes .= $socket->readSuspending($deadline, $o->display, Greeting::SIZE - \strlen($bytes));
                }
            } catch (ConnectionException $e) {
                throw new ConnectionException('No greeting from ' . $o->display . ': ' . $e->getMessage(), $o->display, false, $e);
            }
        } catch (\Throwable $e) {
            $socket->close();
            throw $e;
        }
        return new self($stream, Greeting::parse($bytes), false);
    }

    /** Waits (suspending the Fiber) for data until $deadline, then returns one read's worth. */
    public function readSuspending(float $deadline, string $peer, int $max = self::READ_CHUNK): string
    {
        $left = $deadline - \microtime(true);
        if ($left <= 0.0 || !Scheduler::awaitReadable($this->stream, $left)) {
            throw new TimeoutException('Read timed out' . ($peer !== '' ? ' from ' . $peer : ''), $peer);
        }
        $data = @\fread($this->stream, $max);
        if ($data === '' || $data === false) {
            throw new ConnectionException('Connection closed by peer' . ($peer !== '' ? ' ' . $peer : ''), $peer);
        }
        return $data;
    }

    /** @param resource $stream */
    private static function pendingError($stream): string
    {
        if (\function_exists('socket_import_stream')) {
            $sock = @\socket_import_stream($stream);
            $errno = $sock === false ? 0 : (int) @\socket_get_option($sock, \SOL_SOCKET, \SO_ERROR);
            if ($errno !== 0) {
                return \socket_strerror($errno);
            }
        }
        return 'connection refused or unreachable';
    }

    /** @return resource */
    private static function connect(Options $o, string $address)
    {
        $context = \stream_context_create($o->unix ? [] : ['socket' => ['tcp_nodelay' => $o->tcpNoDelay]]);
        $flags = \STREAM_CLIENT_CONNECT | ($o->persistent ? \STREAM_CLIENT_PERSISTENT : 0);
        $errno = 0;
        $errstr = '';
        $stream = @\stream_socket_client($address, $errno, $errstr, $o->connectTimeout, $flags, $context);
        if ($stream === false) {
            $msg = \sprintf('Cannot connect to %s: %s', $o->display, $errstr !== '' ? $errstr : 'error ' . $errno);
            if ($errno === 110 || \stripos($errstr, 'timed out') !== false) {
                throw new TimeoutException($msg, $o->display);
            }
            throw new ConnectionException($msg, $o->display);
        }
        // Connection frames replies itself; PHP's own read buffer would only add a copy.
        \stream_set_read_buffer($stream, 0);
        return $stream;
    }

    /** @param resource $stream */
    private static function isCleanReuse($stream, Options $o): bool
    {
        // Exactly the greeting consumed means AUTH never completed on that socket.
        if ($o->needsAuth() && \ftell($stream) <= Greeting::SIZE) {
            return false;
        }
        \stream_set_blocking($stream, false);
        $peek = @\fread($stream, 1);
        return $peek === '' && !\feof($stream);
    }

    /** Sets the stream timeout, unless it already has that value. */
    public function setTimeout(float $timeout): void
    {
        if ($timeout !== $this->timeout) {
            $this->timeout = $timeout;
            $sec = (int) $timeout;
            \stream_set_timeout($this->stream, $sec, (int) (($timeout - $sec) * 1e6));
        }
    }

    /**
     * One recv() of at most $max bytes, waiting up to $timeout seconds for the first byte.
     * Never returns an empty string. $within is the request's whole timeout, for the
     * message: $timeout is what is left of it when this read starts.
     */
    public function read(float $timeout, int $max = self::READ_CHUNK, string $peer = '', ?float $within = null): string
    {
        if ($timeout <= 0.0) {
            throw new TimeoutException('Read timed out' . ($peer !== '' ? ' from ' . $peer : ''), $peer, true);
        }
        $this->setTimeout($timeout);
        $data = @\fread($this->stream, $max);
        if ($data === '' || $data === false) {
            if (\stream_get_meta_data($this->stream)['timed_out']) {
                throw new TimeoutException(\sprintf('No reply within %.3f s%s', $within ?? $timeout, $peer !== '' ? ' from ' . $peer : ''), $peer, true);
            }
            throw new ConnectionException('Connection closed by peer' . ($peer !== '' ? ' ' . $peer : ''), $peer, true);
        }
        return $data;
    }

    /**
     * Writes all of $data or throws; $timeout bounds each wait for buffer space. $written grows
     * by every byte the kernel accepted, also when it throws part-way: the caller works out
     * from it which frames may have reached the server.
     *
     * With $received, the write never waits on a full send buffer alone: whatever the server
     * sends meanwhile is read and handed to $received. A server whose replies back up stops
     * reading requests, so a pipelined batch larger than the buffers both ways would
     * otherwise stall until the timeout, with the client writing and the server writing and
     * neither reading.
     *
     * @param (\Closure(string): void)|null $received
     */
    public function write(string $data, float $timeout, string $peer = '', int &$written = 0, ?\Closure $received = null): void
    {
        $this->setTimeout($timeout);
        if ($received !== null && \strlen($data) > self::SMALL_WRITE) {
            $this->writeReading($data, $timeout, $peer, $written, $received);
            return;
        }
        $len = \strlen($data);
        $n = @\fwrite($this->stream, $data);
        while ($n !== $len) {
            if ($n === false || $n === 0) {
                if (\stream_get_meta_data($this->stream)['timed_out']) {
                    throw new TimeoutException('Write timed out to ' . $peer, $peer, false);
                }
                throw new ConnectionException('Cannot write to ' . $peer . ' (connection broken)', $peer, false);
            }
            $written += $n;
            $data = \substr($data, $n);
            $len -= $n;
            $n = @\fwrite($this->stream, $data);
        }
        $written += $n;
    }

    /**
     * write() of a large batch: non-blocking, so that a full send buffer makes it wait for
     * room or replies, whichever comes, instead of blocking in the kernel.
     */
    private function writeReading(string $data, float $timeout, string $peer, int &$written, \Closure $received): void
    {
        \stream_set_blocking($this->stream, false);
        try {
            while (true) {
                $n = @\fwrite($this->stream, $data);
                if ($n === false) {
                    throw new ConnectionException('Cannot write to ' . $peer . ' (connection broken)', $peer, false);
                }
                $written += $n;
                $data = (string) \substr($data, $n);
                if ($data === '') {
                    return;
                }
                $r = $w = [$this->stream];
                $e = null;
                $sec = (int) $timeout;
                $ready = @\stream_select($r, $w, $e, $sec, (int) (($timeout - $sec) * 1e6));
                if ($ready === 0) {
                    throw new TimeoutException('Write timed out to ' . $peer, $peer, false);
                }
                if ($ready === false) {
                    throw new ConnectionException('Cannot write to ' . $peer . ' (select failed)', $peer, false);
                }
                if ($r !== []) {
                    $in = @\fread($this->stream, 65536);
                    if ($in === false || ($in === '' && \feof($this->stream))) {
                        throw new ConnectionException('Cannot write to ' . $peer . ' (connection closed by peer)', $peer, false);
                    }
                    $received($in);
                }
            }
        } finally {
            \stream_set_blocking($this->stream, true);
        }
    }

    /**
     * Closes this process's descriptor only, for a socket inherited through fork(): unlike
     * close(), it leaves the connection up for the process that still uses it.
     */
    public function release(): void
    {
        if (\is_resource($this->stream)) {
            @\fclose($this->stream);
        }
    }

    public function close(): void
    {
        if (\is_resource($this->stream)) {
            // fclose() alone would leave a persistent socket open for the next PHP request.
            @\stream_socket_shutdown($this->stream, \STREAM_SHUT_RDWR);
            @\fclose($this->stream);
        }
    }
}
