<?php

declare(strict_types=1);

namespace Ferry\Worker\Relay;

/**
 * Relay over PHP streams: two inherited pipe descriptors, STDIN/STDOUT, or one connected
 * unix/tcp socket.
 */
final class StreamRelay implements RelayInterface
{
    public const READ_SIZE = 65536;

    /** @var resource */
    private $in;
    /** @var resource */
    private $out;
    private bool $closed = false;
    /** the zygote's socket path ("zygote:unix:///path"), until the fork gives this relay its pipes */
    private ?string $zygote = null;

    /**
     * @param resource $in
     * @param resource $out
     */
    public function __construct($in, $out, private readonly bool $stdout = false)
    {
        if (!\is_resource($in) || !\is_resource($out)) {
            throw new \InvalidArgumentException('StreamRelay needs two open stream resources');
        }
        $this->adopt($in, $out);
    }

    /**
     * @internal A relay whose streams a zygote's fork hands over (Internal\Fork\Zygote).
     */
    public static function forZygote(string $socketPath): self
    {
        $relay = (new \ReflectionClass(self::class))->newInstanceWithoutConstructor();
        $relay->zygote = $socketPath;
        $relay->stdout = false;

        return $relay;
    }

    /** @internal where the zygote connects, until the fork; null for a worker's relay */
    public function zygoteSocket(): ?string
    {
        return $this->zygote;
    }

    /**
     * @internal Binds the streams: the constructor's, or the pipes a forked worker is given.
     *
     * @param resource $in
     * @param resource $out
     */
    public function adopt($in, $out): void
    {
        $this->zygote = null;
        $this->closed = false;
        $this->in = $in;
        $this->out = $out;
        // Unbuffered reads make fread() return whatever one read(2) yields (up to 64 KiB)
        // instead of PHP's 8 KiB chunking, and keep stream_select() truthful.
        stream_set_read_buffer($in, 0);
        stream_set_chunk_size($in, self::READ_SIZE);
        stream_set_write_buffer($out, 0);
        stream_set_blocking($in, true);
        stream_set_blocking($out, true);
    }

    /**
     * Builds the relay named by a DSN: "pipes:R,W" (read jobs from fd R, write answers to
     * fd W: what the server uses, so STDOUT stays a log stream), "pipes" (STDIN/STDOUT, for
     * servers that predate the extra descriptors), "unix:///path/to.sock" or "tcp://host:port".
     */
    public static function fromDsn(string $dsn, float $connectTimeout = 10.0): self
    {
        if (str_starts_with($dsn, 'zygote:unix://')) {
            return self::forZygote(substr($dsn, \strlen('zygote:unix://')));
        }
        if ($dsn === '' || $dsn === 'pipes' || $dsn === 'pipe') {
            $in = \defined('STDIN') ? STDIN : fopen('php://stdin', 'rb');
            $out = \defined('STDOUT') ? STDOUT : fopen('php://stdout', 'wb');

            return new self($in, $out, true);
        }
        if (preg_match('~^pipes:(\d+),(\d+)$~', $dsn, $fd)) {
            return new self(self::openFd((int) $fd[1], 'rb', $dsn), self::openFd((int) $fd[2], 'wb', $dsn), false);
        }
        if (!preg_match('~^(unix|tcp)://(.+)$~', $dsn, $m)) {
            throw new RelayException(
                "unsupported relay \"$dsn\": expected pipes:R,W, pipes, unix:///path or tcp://host:port"
            );
        }
        $socket = @stream_socket_client($dsn, $errno, $error, $connectTimeout);
        if ($socket === false) {
            throw new RelayException("cannot connect relay $dsn: $error (errno $errno)");
        }
        // The server may stay idle for hours between jobs; the default socket timeout
        // (60 s) would only make read() wake up and loop.
        stream_set_timeout($socket, 86400);

        return new self($socket, $socket, false);
    }

    /**
     * @return resource
     */
    private static function openFd(int $fd, string $mode, string $dsn)
    {
        if ($fd <= 2) {
            throw new RelayException("relay $dsn: descriptor $fd is a standard stream; the relay needs descriptors of its own");
        }
        $stream = @fopen("php://fd/$fd", $mode);
        if ($stream === false) {
            $error = error_get_last()['message'] ?? 'unknown error';
            throw new RelayException("relay $dsn: cannot open descriptor $fd (was the worker started by the server?): $error");
        }

        return $stream;
    }

    public function write(string $bytes): void
    {
        $length = \strlen($bytes);
        $written = 0;
        $stalls = 0;
        while ($written < $length) {
            $n = @fwrite($this->out, $written === 0 ? $bytes : substr($bytes, $written));
            // A blocking stream only returns 0 transiently; a few in a row means it is dead.
            if ($n === false || ($n === 0 && ++$stalls > 100)) {
                $error = error_get_last()['message'] ?? 'no progress';
                throw new RelayException("relay write failed after $written of $length bytes: $error");
            }
            $written += $n;
        }
    }

    public function read(): string
    {
        while (true) {
            $data = @fread($this->in, self::READ_SIZE);
            if ($data !== false && $data !== '') {
                return $data;
            }
            if (feof($this->in)) {
                throw new RelayClosedException('relay closed by the server');
            }
            if ($data === false) {
                $error = error_get_last()['message'] ?? 'unknown error';
                throw new RelayException("relay read failed: $error");
            }
            // Empty read without EOF: a signal interrupted us or a socket read timed out.
        }
    }

    public function readStream()
    {
        return $this->in;
    }

    /**
     * @internal the stream answers are written to (ext/ferry's loop writes there itself)
     *
     * @return resource
     */
    public function writeStream()
    {
        return $this->out;
    }

    public function usesStdout(): bool
    {
        return $this->stdout;
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if (!$this->stdout) {
            @fclose($this->in);
            if ($this->out !== $this->in) {
                @fclose($this->out);
            }
        }
    }
}
