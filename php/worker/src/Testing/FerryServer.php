<?php

declare(strict_types=1);

namespace Ferry\Worker\Testing;

/**
 * A real `ferry serve` process for an application's own end-to-end tests.
 *
 * The YAML may use %ADDR% (a free port is chosen by the server itself, so no other
 * process can take it between a probe and the listen) and %DIR% (a private temp dir).
 * The binary comes from $FERRY_BIN, else `ferry` on PATH, else the repository's bin/ferry.
 */
final class FerryServer
{
    /** @var resource */
    private $proc;
    /** @var resource */
    private $stderr;
    private string $log = '';
    private string $dir;
    public readonly string $url;

    public function __construct(string $yaml, float $startTimeout = 20.0)
    {
        $this->dir = \sys_get_temp_dir() . '/ferry-test-' . \bin2hex(\random_bytes(6));
        \mkdir($this->dir, 0o700);
        $yaml = \strtr($yaml, ['%ADDR%' => '127.0.0.1:0', '%DIR%' => $this->dir]);
        \file_put_contents($this->dir . '/ferry.yaml', $yaml);
        $cmd = [self::binary(), 'serve', '-c', $this->dir . '/ferry.yaml'];
        $proc = \proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->dir . '/stdout.log', 'a'], 2 => ['pipe', 'w']], $pipes);
        if ($proc === false) {
            throw new \RuntimeException('cannot start ' . $cmd[0]);
        }
        $this->proc = $proc;
        $this->stderr = $pipes[2];
        \stream_set_blocking($this->stderr, false);
        $deadline = \microtime(true) + $startTimeout;
        while (true) {
            $this->pump(0.2);
            if (\preg_match('/^Ferry is serving on (\S+)/m', $this->log, $m)) {
                $this->url = $m[1];
                return;
            }
            if (!\proc_get_status($this->proc)['running'] || \microtime(true) > $deadline) {
                $this->stop();
                throw new \RuntimeException("ferry did not start:\n" . $this->log);
            }
        }
    }

    public static function binary(): string
    {
        $env = \getenv('FERRY_BIN');
        if (\is_string($env) && $env !== '') {
            return $env;
        }
        foreach (\explode(':', (string) \getenv('PATH')) as $dir) {
            if ($dir !== '' && \is_executable($dir . '/ferry')) {
                return $dir . '/ferry';
            }
        }
        $repo = \dirname(__DIR__, 4) . '/bin/ferry';
        if (\is_executable($repo)) {
            return $repo;
        }
        throw new \RuntimeException('no ferry binary: set FERRY_BIN or run `make build`');
    }

    /** Everything the server logged so far (its own records and the workers' output). */
    public function log(): string
    {
        $this->pump(0.0);
        return $this->log;
    }

    /** Waits until the log matches $pattern; returns the match or throws after $timeout. */
    public function waitForLog(string $pattern, float $timeout = 10.0): array
    {
        $deadline = \microtime(true) + $timeout;
        do {
            $this->pump(0.1);
            if (\preg_match($pattern, $this->log, $m)) {
                return $m;
            }
        } while (\microtime(true) < $deadline);
        throw new \RuntimeException("log never matched $pattern:\n" . $this->log);
    }

    public function pid(): int
    {
        return \proc_get_status($this->proc)['pid'];
    }

    /** SIGTERM, then SIGKILL after $grace seconds; returns the exit code. */
    public function stop(float $grace = 15.0): int
    {
        $status = \proc_get_status($this->proc);
        if ($status['running']) {
            \proc_terminate($this->proc, 15); // SIGTERM, without needing ext-pcntl for the constant
            $deadline = \microtime(true) + $grace;
            while (($status = \proc_get_status($this->proc))['running'] && \microtime(true) < $deadline) {
                $this->pump(0.05);
            }
            if ($status['running']) {
                \proc_terminate($this->proc, 9);
            }
        }
        $this->pump(0.0);
        \fclose($this->stderr);
        $code = \proc_close($this->proc);
        $code = $status['running'] ? $code : $status['exitcode'];
        self::removeTree($this->dir);
        return $code;
    }

    public function __destruct()
    {
        if (\is_resource($this->proc)) {
            $this->stop();
        }
    }

    private function pump(float $wait): void
    {
        $r = [$this->stderr];
        $w = $e = null;
        if (@\stream_select($r, $w, $e, (int) $wait, (int) (($wait - (int) $wait) * 1e6)) > 0) {
            while (($chunk = \fread($this->stderr, 65536)) !== false && $chunk !== '') {
                $this->log .= $chunk;
            }
        }
    }

    private static function removeTree(string $dir): void
    {
        if (!\is_dir($dir)) {
            return;
        }
        $it = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST);
        foreach ($it as $f) {
            $f->isDir() && !$f->isLink() ? @\rmdir($f->getPathname()) : @\unlink($f->getPathname());
        }
        @\rmdir($dir);
    }
}
