<?php
// A stand-in for ext/ferry's loop of server.mode: direct, in pure PHP, for the Go
// server's tests (direct_go_e2e_test.go): it says "direct":true in its handshake
// (unless DIRECT_SAY=no), accepts on the socket FERRY_DIRECT_FD names and answers each
// connection's one request with a fixed HTTP/1.1 answer naming its pid, one at a time
// (GET /slow?ms=N holds the worker, so that connections wait in the accept queue).
// Once the server's stop frame came it accepts no more; after max_jobs of
// FERRY_DIRECT_LIMITS it asks to be retired. Jobs from the relay (the front's TLS
// listener) get the same answer, marked "via":"relay".
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Loop;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

$fd = (string) getenv('FERRY_DIRECT_FD');
$limits = json_decode((string) getenv('FERRY_DIRECT_LIMITS'), true);
$about = static fn (string $via): string => json_encode([
    'pid' => getmypid(), 'ppid' => posix_getppid(), 'fd' => $fd, 'via' => $via, 'limits' => $limits,
    // O_NONBLOCK (04000) as /proc shows the shared socket's flags
    'flags' => preg_match('/^flags:\s+(\d+)/m', (string) @file_get_contents("/proc/self/fdinfo/$fd"), $m) ? $m[1] : '',
]);

$worker = Worker::create(fibers: true);
if (getenv('DIRECT_SAY') !== 'no') {
    $worker->session()->direct = true; // what ext/ferry's loop says in its handshake
}
$loop = Loop::get();
$served = 0;
$maxJobs = (int) ($limits['max_jobs'] ?? 0);

// Deferred to the first tick of the worker loop, after the handshake: under pool.boot: fork
// that is in the forked worker, not in the zygote.
$loop->defer(static function () use ($loop, $worker, $fd, $about, &$served, $maxJobs): void {
    $listener = fopen("php://fd/$fd", 'r');
    $socket = socket_import_stream($listener);
    $id = 0;
    $id = $loop->onReadable($listener, static function () use ($loop, $worker, $socket, $about, &$served, $maxJobs, &$id): void {
        if ($worker->isStopping()) {
            $loop->cancel($id); // the stop frame came: the queue is the others'

            return;
        }
        $conn = @socket_accept($socket);
        if ($conn === false) {
            return; // another worker took it (the shared socket is non-blocking)
        }
        socket_set_option($conn, SOL_SOCKET, SO_RCVTIMEO, ['sec' => 5, 'usec' => 0]);
        $head = '';
        while (!str_contains($head, "\r\n\r\n") && strlen($head) < 65536) {
            $chunk = @socket_read($conn, 8192);
            if ($chunk === false || $chunk === '') {
                break;
            }
            $head .= $chunk;
        }
        if (preg_match('~^GET /slow\?ms=(\d+)~', $head, $m)) {
            fwrite(STDERR, "direct.php: serving a slow request\n");
            usleep((int) $m[1] * 1000);
        }
        $body = $about('direct');
        @socket_write($conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " . strlen($body)
            . "\r\nConnection: close\r\n\r\n" . $body);
        socket_close($conn); // the request (a head, no body) was read whole: no reset
        if (++$served === $maxJobs) {
            $worker->stop(); // {"stop":true}: retire me
        }
    });
});

$worker->run(static fn (Payload $p): Payload => new Payload($about('relay'), '{"status":200,"headers":{"Content-Type":["application/json"]}}'));
