<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

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
    /** Current stream timeout in seconds (read-only outside this class). */
    public float $timeout = -1.0;

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
        $stream = self::connect($o, $o->persistent ? $o->persistentAddress() : $o->address);
        if ($o->persistent && \ftell($stream) > 0) {
            if (self::isCleanReuse($stream, $o)) {
                \stream_set_blocking($stream, true);
                return new self($stream, null, true);
            }
            \fclose($stream);
            $stream = self::connect($o, $o->persistentAddress());
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
     * Never returns an empty string.
     */
    public function read(float $timeout, int $max = self::READ_CHUNK, string $peer = ''): string
    {
        if ($timeout <= 0.0) {
            throw new TimeoutException('Read timed out' . ($peer !== '' ? ' from ' . $peer : ''), $peer, true);
        }
        $this->setTimeout($timeout);
        $data = @\fread($this->stream, $max);
        if ($data === '' || $data === false) {
            if (\stream_get_meta_data($this->stream)['timed_out']) {
                throw new TimeoutException(\sprintf('No reply within %.3f s%s', $timeout, $peer !== '' ? ' from ' . $peer : ''), $peer, true);
            }
            throw new ConnectionException('Connection closed by peer' . ($peer !== '' ? ' ' . $peer : ''), $peer, true);
        }
        return $data;
    }

    /** Writes all of $data or throws; $timeout bounds each wait for buffer space. */
    public function write(string $data, float $timeout, string $peer = ''): void
    {
        $this->setTimeout($timeout);
        $len = \strlen($data);
        $n = @\fwrite($this->stream, $data);
        while ($n !== $len) {
            if ($n === false || $n === 0) {
                if (\stream_get_meta_data($this->stream)['timed_out']) {
                    throw new TimeoutException('Write timed out to ' . $peer, $peer, false);
                }
                throw new ConnectionException('Cannot write to ' . $peer . ' (connection broken)', $peer, false);
            }
            $data = \substr($data, $n);
            $len -= $n;
            $n = @\fwrite($this->stream, $data);
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
