<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests\Support;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameParser;

/**
 * Plays the Go server's role against a real PHP worker child process, over the relays the
 * server offers: "fds" (jobs on fd 3, answers on fd 4, FERRY_RELAY=pipes:3,4 and a
 * FERRY_RELAY_TOKEN, STDIN /dev/null and STDOUT a log file, as the server starts workers),
 * "pipes" (the legacy STDIN/STDOUT relay), a unix socket or loopback tcp. Every wait has a
 * deadline so a broken worker fails the test instead of hanging it.
 */
final class WorkerProcess
{
    /** @var resource */
    private $process;
    /** @var resource stream the "server" writes frames to */
    private $out;
    /** @var resource stream the "server" reads frames from */
    private $in;
    private FrameParser $parser;
    private string $stderrFile;
    private ?string $stdoutFile = null;
    private ?string $token = null;
    private ?string $socketPath = null;
    private ?int $exitCode = null;
    /** @var array<int, resource> */
    private array $keep = [];

    /**
     * @param array<string, string> $env
     */
    public function __construct(string $script, array $env = [], string $relay = 'pipes')
    {
        $this->parser = new FrameParser(new FrameCodec());
        $this->stderrFile = tempnam(sys_get_temp_dir(), 'ferry-stderr-');
        $env += getenv();
        $listener = null;
        if ($relay === 'unix') {
            $this->socketPath = sys_get_temp_dir() . '/ferry-test-' . bin2hex(random_bytes(6)) . '.sock';
            $listener = stream_socket_server('unix://' . $this->socketPath, $errno, $error);
            if ($listener === false) {
                throw new \RuntimeException("cannot listen on {$this->socketPath}: $error");
            }
            $env['FERRY_RELAY'] = 'unix://' . $this->socketPath;
        } elseif ($relay === 'tcp') {
            $listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
            if ($listener === false) {
                throw new \RuntimeException("cannot listen on 127.0.0.1: $error");
            }
            $env['FERRY_RELAY'] = 'tcp://' . stream_socket_get_name($listener, false);
        } elseif ($relay === 'fds') {
            $env['FERRY_RELAY'] = 'pipes:3,4';
            $env['FERRY_RELAY_TOKEN'] = $this->token = bin2hex(random_bytes(16));
        } elseif ($relay === 'pipes') {
            $env['FERRY_RELAY'] = 'pipes';
        } else {
            throw new \InvalidArgumentException("unknown relay $relay");
        }
        $spec = [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->stderrFile, 'w']];
        if ($relay === 'fds') {
            $this->stdoutFile = tempnam(sys_get_temp_dir(), 'ferry-stdout-');
            $spec = [
                0 => ['file', '/dev/null', 'r'],
                1 => ['file', $this->stdoutFile, 'w'],
                2 => ['file', $this->stderrFile, 'w'],
                3 => ['pipe', 'r'],
                4 => ['pipe', 'w'],
            ];
        }
        $process = proc_open([PHP_BINARY, '-d', 'display_errors=stdout', $script], $spec, $pipes, null, $env);
        if ($process === false) {
            throw new \RuntimeException("cannot start $script");
        }
        $this->process = $process;
        if ($listener !== null) {
            $conn = @stream_socket_accept($listener, 10);
            fclose($listener);
            if ($conn === false) {
                $this->terminate();
                throw new \RuntimeException("worker did not connect over $relay; stderr: " . $this->stderr());
            }
            $this->in = $this->out = $conn;
            $this->keep = [$pipes[0], $pipes[1]];
        } elseif ($relay === 'fds') {
            $this->out = $pipes[3];
            $this->in = $pipes[4];
        } else {
            $this->out = $pipes[0];
            $this->in = $pipes[1];
        }
        stream_set_blocking($this->in, false);
    }

    public function __destruct()
    {
        $this->terminate();
        @unlink($this->stderrFile);
        if ($this->stdoutFile !== null) {
            @unlink($this->stdoutFile);
        }
        if ($this->socketPath !== null) {
            @unlink($this->socketPath);
        }
    }

    /**
     * @return array<string, mixed> the worker's handshake reply
     */
    /**
     * @param array<string, mixed> $extra more keys of the server's hello (e.g. waits)
     * @return array<string, mixed> the worker's answer
     */
    public function handshake(array $extra = []): array
    {
        $this->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], json_encode(['pid' => getmypid()] + $extra)));
        $reply = $this->readFrames(1)[0];
        if ($reply->flags !== (Frame::CONTROL | Frame::JSON)) {
            throw new \RuntimeException(sprintf('handshake reply has flags 0x%02x', $reply->flags));
        }

        return json_decode($reply->payload, true, 4, JSON_THROW_ON_ERROR);
    }

    public function send(string $bytes): void
    {
        $written = 0;
        while ($written < \strlen($bytes)) {
            $n = fwrite($this->out, substr($bytes, $written));
            if ($n === false || $n === 0) {
                throw new \RuntimeException('write to worker failed');
            }
            $written += $n;
        }
    }

    public static function job(int $id, string $body, string $context = ''): string
    {
        return FrameCodec::encode(Frame::CODEC_RAW, [\strlen($context), $id], $context . $body);
    }

    public function sendStop(): void
    {
        $this->send(FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"stop":true}'));
    }

    /**
     * @return list<Frame>
     */
    public function readFrames(int $count, float $timeout = 10.0): array
    {
        $frames = [];
        $deadline = microtime(true) + $timeout;
        while (true) {
            while (\count($frames) < $count && ($frame = $this->parser->next()) !== null) {
                $frames[] = $frame;
            }
            if (\count($frames) >= $count) {
                return $frames;
            }
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new \RuntimeException(sprintf(
                    'timed out waiting for %d frames (got %d); worker log: %s',
                    $count,
                    \count($frames),
                    $this->log()
                ));
            }
            $read = [$this->in];
            $write = $except = null;
            if (@stream_select($read, $write, $except, (int) $left, (int) (fmod($left, 1) * 1e6)) > 0) {
                $data = fread($this->in, 65536);
                if ($data === '' && feof($this->in)) {
                    throw new \RuntimeException(sprintf(
                        'worker closed the relay after %d of %d frames; stderr: %s',
                        \count($frames),
                        $count,
                        $this->stderr()
                    ));
                }
                $this->parser->push((string) $data);
            }
        }
    }

    /**
     * Bytes the worker wrote that are not frames yet (must stay empty between answers).
     */
    public function leftover(): int
    {
        return $this->parser->buffered();
    }

    /**
     * Waits for the process to exit and returns its exit code.
     */
    public function wait(float $timeout = 10.0): int
    {
        $deadline = microtime(true) + $timeout;
        while ($this->exitCode === null) {
            $status = proc_get_status($this->process);
            if (!$status['running']) {
                $this->exitCode = $status['exitcode'];
                break;
            }
            if (microtime(true) > $deadline) {
                $this->terminate();
                throw new \RuntimeException('worker did not exit in time; stderr: ' . $this->stderr());
            }
            usleep(10000);
        }

        return $this->exitCode;
    }

    /**
     * Reads whatever else the worker sends until it closes the relay.
     */
    public function drainUntilClosed(float $timeout = 10.0): string
    {
        $deadline = microtime(true) + $timeout;
        $rest = '';
        while (microtime(true) < $deadline) {
            $read = [$this->in];
            $write = $except = null;
            if (@stream_select($read, $write, $except, 0, 100000) > 0) {
                $data = fread($this->in, 65536);
                if ($data === '' || $data === false) {
                    if (feof($this->in)) {
                        return $rest;
                    }
                    continue;
                }
                $rest .= $data;
            }
        }
        throw new \RuntimeException('relay not closed in time');
    }

    public function closeRelay(): void
    {
        @fclose($this->out);
    }

    public function stderr(): string
    {
        return (string) @file_get_contents($this->stderrFile);
    }

    /** What the worker wrote on STDOUT, a log stream on the "fds" relay. */
    public function stdout(): string
    {
        if ($this->stdoutFile === null) {
            throw new \LogicException('STDOUT is only a log stream on the fds relay');
        }

        return (string) @file_get_contents($this->stdoutFile);
    }

    /** Both log streams, as the server would log them. */
    public function log(): string
    {
        return ($this->stdoutFile === null ? '' : $this->stdout()) . $this->stderr();
    }

    /** The FERRY_RELAY_TOKEN the worker was started with (fds relay only). */
    public function token(): ?string
    {
        return $this->token;
    }

    public function pid(): int
    {
        return proc_get_status($this->process)['pid'];
    }

    private function terminate(): void
    {
        if (!\is_resource($this->process)) {
            return;
        }
        $status = proc_get_status($this->process);
        if ($status['running']) {
            proc_terminate($this->process, 9);
        }
        foreach ([$this->in, $this->out, ...$this->keep] as $stream) {
            if (\is_resource($stream)) {
                @fclose($stream);
            }
        }
        proc_close($this->process);
    }
}
