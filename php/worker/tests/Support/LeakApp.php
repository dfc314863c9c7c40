<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests\Support;

use Ferry\Worker\Testing\FerryServer;
use Ferry\Worker\Testing\HttpClient;

/**
 * A fixture app (tests/fixtures/leak) under a real `ferry serve` with pool.leak_watch on,
 * one worker, and an admin socket the test reads the findings from through `ferry leaks
 * --json` itself.
 */
final class LeakApp
{
    public readonly FerryServer $server;
    public readonly HttpClient $client;
    private readonly string $dir;

    /**
     * @param array<string, string> $env  the app's environment
     * @param string               $pool more `pool:` keys, each line indented by two spaces
     */
    public function __construct(string $fixture, array $env = [], string $pool = '', int $every = 1, int $warmup = 3, bool $watch = true)
    {
        $this->dir = sys_get_temp_dir() . '/ferry-leak-' . bin2hex(random_bytes(4));
        mkdir($this->dir, 0o700);
        $socket = json_encode($this->dir . '/admin.sock', JSON_UNESCAPED_SLASHES);
        file_put_contents($this->dir . '/cli.yaml', "admin:\n  socket: $socket\n");
        $envYaml = '';
        foreach ($env as $name => $value) {
            $envYaml .= "    $name: " . json_encode($value, JSON_UNESCAPED_SLASHES) . "\n";
        }
        $command = json_encode(['php', __DIR__ . '/../fixtures/leak/' . $fixture], JSON_UNESCAPED_SLASHES);
        $yaml = "server:\n  address: %ADDR%\n"
            . "admin:\n  socket: $socket\n"
            . "pool:\n  command: $command\n  num_workers: 1\n"
            . '  leak_watch: ' . ($watch ? 'true' : 'false') . "\n"
            . "  leak_watch_every: $every\n  leak_watch_warmup: $warmup\n"
            . ($envYaml === '' ? '' : "  env:\n$envYaml")
            . $pool;
        try {
            $this->server = new FerryServer($yaml);
        } catch (\Throwable $e) {
            $this->removeDir();
            throw $e;
        }
        $this->client = new HttpClient($this->server->url);
    }

    public function get(string $path): string
    {
        $response = $this->client->get($path);
        if ($response['status'] !== 200) {
            throw new \RuntimeException("GET $path: {$response['status']} {$response['body']}\n" . $this->server->log());
        }

        return $response['body'];
    }

    /**
     * Sends $count GETs cycling through $paths on one keep-alive connection, pipelined
     * by 50, and checks every answer is a 200.
     *
     * @param list<string> $paths
     */
    public function hammer(array $paths, int $count): void
    {
        $address = parse_url($this->server->url);
        $conn = stream_socket_client("tcp://{$address['host']}:{$address['port']}", $errno, $error, 5);
        if ($conn === false) {
            throw new \RuntimeException("connect: $error");
        }
        stream_set_timeout($conn, 30);
        for ($sent = 0; $sent < $count;) {
            $batch = min(50, $count - $sent);
            $out = '';
            for ($i = 0; $i < $batch; $i++) {
                $out .= 'GET ' . $paths[($sent + $i) % \count($paths)] . " HTTP/1.1\r\nHost: leak.test\r\n\r\n";
            }
            fwrite($conn, $out);
            $sent += $batch;
            $in = '';
            while (substr_count($in, "HTTP/1.1 ") < $batch || !str_ends_with($in, "\n")) {
                $chunk = fread($conn, 65536);
                if ($chunk === false || ($chunk === '' && feof($conn))) {
                    throw new \RuntimeException("connection closed after $sent requests:\n" . $this->server->log());
                }
                $in .= $chunk;
            }
            if (substr_count($in, 'HTTP/1.1 200 ') !== $batch) {
                throw new \RuntimeException("not every answer is a 200:\n" . substr($in, 0, 2000));
            }
        }
        fclose($conn);
    }

    /**
     * What `ferry leaks --json` prints.
     *
     * @return list<array<string, mixed>>
     */
    public function findings(): array
    {
        $out = $this->cli('leaks', '--json');
        $data = json_decode($out, true);
        if (!\is_array($data)) {
            throw new \RuntimeException("ferry leaks --json printed: $out");
        }

        return $data;
    }

    /**
     * Polls `ferry leaks` until a finding of $kind shows up (findings travel from the worker
     * after its answer, so they may trail the last response by a moment).
     *
     * @return array<string, mixed>
     */
    public function waitForFinding(string $kind, float $timeout = 10.0): array
    {
        $deadline = microtime(true) + $timeout;
        do {
            foreach ($this->findings() as $finding) {
                if ($finding['kind'] === $kind) {
                    return $finding;
                }
            }
            usleep(20_000);
        } while (microtime(true) < $deadline);
        throw new \RuntimeException("no $kind finding; findings: " . json_encode($this->findings(), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\nlog:\n" . $this->server->log());
    }

    public function cli(string ...$args): string
    {
        $cmd = [FerryServer::binary(), ...$args, '-c', $this->dir . '/cli.yaml'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        if (proc_close($proc) !== 0) {
            throw new \RuntimeException(implode(' ', $args) . " failed: $err");
        }

        return (string) $out;
    }

    /** GET $path on the admin socket (/metrics, /workers). */
    public function admin(string $path): string
    {
        $conn = stream_socket_client('unix://' . $this->dir . '/admin.sock', $errno, $error, 5);
        if ($conn === false) {
            throw new \RuntimeException("admin socket: $error");
        }
        fwrite($conn, "GET $path HTTP/1.0\r\nHost: ferry\r\n\r\n");
        $response = (string) stream_get_contents($conn);
        fclose($conn);

        return substr($response, strpos($response, "\r\n\r\n") + 4);
    }

    public function stop(): void
    {
        $this->server->stop();
        $this->removeDir();
    }

    private function removeDir(): void
    {
        array_map('unlink', glob($this->dir . '/*') ?: []);
        @rmdir($this->dir);
    }
}
