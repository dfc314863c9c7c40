<?php

declare(strict_types=1);

/*
 * Where the PHP time of one hello request goes, stage by stage, and the whole worker loop
 * (frames in, HttpWorker, answer frames out) over an in-memory relay. Run it with and
 * without ext/ferry to compare:
 *
 *     php php/worker/bench/ext-hotpath.php [requests]
 *     php -d extension=ext/ferry/.build/modules/ferry.so php/worker/bench/ext-hotpath.php [requests]
 *
 * Each figure is the median of 5 rounds; the loop figure is what a worker spends per
 * request apart from the two relay syscalls; the Fiber-mode loop is the same with
 * Worker(fibers: true), on the event loop (the relay's stream is /dev/zero, always
 * readable). On a shared machine, instruction counts are steadier than times: `loop` (or
 * `fiberloop`, or `handle` for HttpWorker::handle with an installed capture) as second
 * argument runs only that, once, so that bench/ext-instructions.sh can count it under
 * callgrind; `fileloop` is the loop over a real relay (a file of jobs), where ext/ferry
 * serves the jobs in its own loop; `fiberfileloop` is the same in Fiber mode.
 */

require dirname(__DIR__) . '/autoload.php';

use Ferry\Worker\FrameCodec;
use Ferry\Worker\FrameParser;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Internal\JobFrames;
use Ferry\Worker\Internal\Native\ExtRequest;
use Ferry\Worker\Internal\Output\SyncCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Relay\RelayClosedException;
use Ferry\Worker\Relay\RelayInterface;
use Ferry\Worker\Worker;

$n = (int) ($argv[1] ?? 20000);
$only = $argv[2] ?? '';
$batch = 8; // jobs per relay read: pipelined requests arrive together under load

// What the gateway sends for wrk's GET / (internal/gateway/serialize.go).
$context = serialize([
    'method' => 'GET', 'uri' => '/', 'path' => '/', 'query' => '', 'protocol' => 'HTTP/1.1',
    'remote_addr' => '127.0.0.1:50000', 'host' => '127.0.0.1:8080', 'scheme' => 'http',
    'headers' => ['Host' => ['127.0.0.1:8080']],
]);

/** A relay that serves pre-built reads and drops the answers. */
final class MemoryRelay implements RelayInterface
{
    public int $written = 0;
    /** @var list<string> */
    private array $reads;
    private int $next = 0;

    /** @param list<string> $reads */
    public function __construct(array $reads)
    {
        $this->reads = $reads;
    }

    public function write(string $bytes): void
    {
        $this->written += \strlen($bytes);
    }

    public function read(): string
    {
        if ($this->next >= \count($this->reads)) {
            throw new RelayClosedException('done');
        }

        return $this->reads[$this->next++];
    }

    public function readStream()
    {
        // Always readable, so the Fiber-mode loop's select never waits.
        static $stream = null;

        return $stream ??= fopen('/dev/zero', 'r');
    }

    public function usesStdout(): bool
    {
        return false;
    }

    public function close(): void
    {
    }
}

$handshake = FrameCodec::encode(Ferry\Worker\Frame::CONTROL | Ferry\Worker\Frame::JSON, [], '{"pid":1}');
$jobs = '';
for ($i = 0; $i < $batch; $i++) {
    $jobs .= FrameCodec::job(\strlen($context), $i + 1, $context);
}

$median = static function (array $xs): float {
    sort($xs);

    return $xs[intdiv(\count($xs), 2)];
};
$time = static function (string $label, int $ops, \Closure $body) use ($median): void {
    $rounds = [];
    for ($r = 0; $r < 5; $r++) {
        $start = hrtime(true);
        $body();
        $rounds[] = (hrtime(true) - $start) / 1e3 / $ops;
    }
    // Straight to the stream: once a worker ran, echo goes through its output capture.
    fprintf(STDOUT, "  %-44s %6.2f us  (%.2f .. %.2f)\n", $label, $median($rounds), min($rounds), max($rounds));
};

$hello = static fn (Request $r): Response => Response::text("Hello, world\n");
$loop = static function (bool $fibers = false) use ($n, $batch, $handshake, $jobs, $hello): void {
    $reads = [$handshake];
    for ($i = 0; $i < $n; $i += $batch) {
        $reads[] = $jobs;
    }
    (new HttpWorker(new Worker(new MemoryRelay($reads), fibers: $fibers, token: '')))->run($hello);
};
// The same loop over a real relay: jobs read from a file, answers written to /dev/null.
// With ext/ferry this is its own loop (Ferry\Ext\http_serve()) unless FERRY_EXT_LOOP=0;
// the first read's jobs are served by the PHP loop, so compare two request counts.
$fileLoop = static function (bool $fibers = false) use ($n, $batch, $handshake, $jobs, $hello): void {
    $file = tempnam(sys_get_temp_dir(), 'ferry-jobs-');
    file_put_contents($file, $handshake . str_repeat($jobs, intdiv($n + $batch - 1, $batch)));
    $in = fopen($file, 'rb');
    unlink($file);
    (new HttpWorker(new Worker(new Ferry\Worker\Relay\StreamRelay($in, fopen('/dev/null', 'wb')), fibers: $fibers, token: '')))->run($hello);
};
if ($only === 'fileloop' || $only === 'fiberfileloop') {
    $fileLoop($only === 'fiberfileloop');
    exit(0);
}
if ($only === 'handle') {
    $installed = new SyncCapture();
    $installed->install();
    [$a] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    $http = new HttpWorker(new Worker(new Ferry\Worker\Relay\StreamRelay($a, $a)));
    for ($i = 0; $i < $n; $i++) {
        $payload = new Payload('', $context, $i);
        $job = new Job($payload, $installed);
        $installed->begin($job);
        $http->handle($hello, $payload, $job);
        $installed->end($job);
    }
    exit(0);
}
if ($only === 'loop' || $only === 'fiberloop') {
    $loop($only === 'fiberloop');
    exit(0);
}
$ext = extension_loaded('ferry');
printf("ext/ferry %s, %d requests per round, %d jobs per read\n", $ext ? 'loaded' : 'not loaded', $n, $batch);

echo "stages (per request):\n";
$time('FrameParser push+drain', $n, static function () use ($n, $batch, $jobs): void {
    $p = new FrameParser();
    for ($i = 0; $i < $n; $i += $batch) {
        $p->push($jobs);
        $p->drain();
    }
});
$frames = (new FrameParser());
$frames->push($jobs);
$frame = $frames->drain()[0];
$capture = new SyncCapture();
$time('JobFrames::job', $n, static function () use ($n, $frame, $capture): void {
    for ($i = 0; $i < $n; $i++) {
        JobFrames::job($frame, $capture);
    }
});
$time('Request::fromContext', $n, static function () use ($n, $context): void {
    for ($i = 0; $i < $n; $i++) {
        Request::fromContext($context, '');
    }
});
$request = Request::fromContext($context, '');
$time('handler (Response::text)', $n, static function () use ($n, $hello, $request): void {
    for ($i = 0; $i < $n; $i++) {
        $hello($request);
    }
});
$response = $hello($request);
$time('Response::context + Payload', $n, static function () use ($n, $response): void {
    for ($i = 0; $i < $n; $i++) {
        new Payload($response->body, $response->context());
    }
});
$answer = new Payload($response->body, $response->context(), 7);
$time('JobFrames::answer', $n, static function () use ($n, $answer): void {
    for ($i = 0; $i < $n; $i++) {
        JobFrames::answer($answer, 7, FrameCodec::DEFAULT_MAX_PAYLOAD);
    }
});
if ($ext) {
    $time('ExtRequest::begin + answer', $n, static function () use ($n, $request, $response): void {
        for ($i = 0; $i < $n; $i++) {
            ExtRequest::begin($request);
            ExtRequest::answer($response);
            ExtRequest::abandon();
        }
    });
    $time('request_begin + request_end (C)', $n, static function () use ($n): void {
        for ($i = 0; $i < $n; $i++) {
            \Ferry\Ext\request_begin();
            \Ferry\Ext\request_end(false);
        }
    });
}

[$a] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$http = new HttpWorker(new Worker(new Ferry\Worker\Relay\StreamRelay($a, $a)));
$handleEach = static fn (SyncCapture $capture): \Closure => static function () use ($n, $http, $hello, $context, $capture): void {
    for ($i = 0; $i < $n; $i++) {
        $payload = new Payload('', $context, $i);
        $job = new Job($payload, $capture);
        $capture->begin($job);
        $http->handle($hello, $payload, $job);
        $capture->end($job);
    }
};
$time('HttpWorker::handle (capture included)', $n, $handleEach($capture));
// As in a worker: the capture's buffer stays installed, instead of one opened per job.
$installed = new SyncCapture();
$installed->install();
$time('HttpWorker::handle (installed capture)', $n, $handleEach($installed));

fwrite(STDOUT, "whole loop (Worker::run over a memory relay, per request):\n");
$time('HttpWorker::run', $n, $loop);
$time('HttpWorker::run, Fiber mode', $n, static fn () => $loop(true));
$time('HttpWorker::run, file relay' . ($ext && getenv('FERRY_EXT_LOOP') !== '0' ? ' (ext/ferry\'s loop)' : ''), $n, $fileLoop);
$time('HttpWorker::run, Fiber mode, file relay' . ($ext && getenv('FERRY_EXT_LOOP') !== '0' ? ' (ext/ferry\'s Fibers)' : ''), $n, static fn () => $fileLoop(true));
