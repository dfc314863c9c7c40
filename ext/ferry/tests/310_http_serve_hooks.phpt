--TEST--
ferry: http_serve() serves workers with reset and terminate hooks: reset hooks before the answer, terminate hooks after it is written, then {"finished":true}
--EXTENSIONS--
ferry
--SKIPIF--
<?php
$sdk = is_file(__DIR__ . '/sdk.inc') ? require __DIR__ . '/sdk.inc' : '';
if (!is_file($sdk)) echo 'skip php/worker not found (run through ext/ferry/build.sh)';
?>
--FILE--
<?php
require require __DIR__ . '/sdk.inc';
use Ferry\Worker\{Frame, FrameCodec, Job, Worker};
use Ferry\Worker\Http\{HttpWorker, Request, Response};
use Ferry\Worker\Relay\StreamRelay;

$context = static fn (string $path): string => serialize(['method' => 'GET', 'uri' => $path, 'path' => $path, 'headers' => ['Host' => ['x']]]);
$job = static fn (int $id, string $path): string => FrameCodec::job(strlen($context($path)), $id, $context($path));
$in = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
$out = tempnam(sys_get_temp_dir(), 'ferry-phpt-');
// The PHP loop reads the first 64 KiB (the handshake, then jobs): the jobs after them are
// the extension's.
$fill = '';
for ($i = 1; $i <= 600; $i++) {
    $fill .= $job(1000 + $i, '/fill');
}
file_put_contents($in, FrameCodec::encode(Frame::CONTROL | Frame::JSON, [], '{"pid":1}') . $fill
    . $job(1, '/') . $job(2, '/throw') . $job(3, '/') . $job(4, '/hook-fails') . $job(5, '/'));

// Job 2's handler throws: http_serve() returns it, and HttpWorker::resume() finishes it (its
// hooks included) from PHP, with http_serve() no longer on the stack.
$called = static fn (): string => in_array('Ferry\Ext\http_serve', array_column(debug_backtrace(), 'function'), true) ? 'C' : 'PHP';
// Whether job $id's answer is in what the worker has written so far.
$answered = static function (int $id) use ($out): bool {
    [$written] = Ferry\Ext\frames_parse(file_get_contents($out));
    foreach ($written as [$flags, $options]) {
        if (!($flags & Frame::CONTROL) && $options[1] === $id) {
            return true;
        }
    }
    return false;
};
$events = [];
$path = '';
$handler = static function (Request $r) use (&$events, &$path, $called): Response {
    $path = $r->path;
    if ($path !== '/fill') {
        $events[] = "handler $path from {$called()}";
    }
    if ($path === '/throw') {
        throw new RuntimeException('no');
    }
    return Response::text("hi $path");
};
Worker::setLogger(static function (string $m) use (&$events): void {
    $events[] = 'log: ' . strtok($m, "\n");
});
$relay = new StreamRelay(fopen($in, 'rb'), fopen($out, 'wb'));
$worker = new Worker($relay, token: '');
$http = new HttpWorker($worker);
$http->onReset(static function () use (&$events, &$path, $called): void {
    if ($path !== '/fill') {
        $events[] = "reset hook from {$called()}";
    }
});
$fillHooks = [];
$worker->onTerminate(static function (Job $job) use (&$events, &$fillHooks, $called, $answered): void {
    $id = $job->payload->id;
    if ($id > 1000) {
        $fillHooks[$called()] = true;
        return;
    }
    $events[] = sprintf('terminate hook of %d from %s, its answer %s', $id, $called(), $answered($id) ? 'written' : 'NOT written');
    if ($id === 4) {
        throw new LogicException('hook failed');
    }
});
$http->run($handler);

[$frames] = Ferry\Ext\frames_parse(file_get_contents($out));
$answers = $finished = $flagged = $last = 0;
foreach ($frames as $i => [$flags, $options, $payload, $stream]) {
    if ($flags & Frame::CONTROL) {
        $finished += $payload === '{"finished":true}';
        continue;
    }
    $answers++;
    $flagged += ($stream & 0x10) !== 0;
    if ($options[1] > 1000) {
        $last = $i;
    }
}
printf("%d answers, %d flagged FINISHING, %d finished; the fill's hooks ran from %s\n", $answers, $flagged, $finished,
    implode(' and ', array_keys($fillHooks)));
// After the last fill answer and its {"finished":true}:
foreach (array_slice($frames, $last + 2) as [$flags, $options, $payload, $stream]) {
    if ($flags & Frame::CONTROL) {
        printf("control flags %d %s\n", $flags, $payload);
        continue;
    }
    printf("%d: stream flags 0x%02x %s\n", $options[1], $stream, trim(substr($payload, $options[0], 30)));
}
echo implode("\n", $events), "\n";
unlink($in);
unlink($out);
?>
--EXPECTF--
605 answers, 605 flagged FINISHING, 605 finished; the fill's hooks ran from PHP and C
1: stream flags 0x10 hi /
control flags 1 {"finished":true}
2: stream flags 0x10 Internal Server Error
control flags 1 {"finished":true}
3: stream flags 0x10 hi /
control flags 1 {"finished":true}
4: stream flags 0x10 hi /hook-fails
control flags 1 {"finished":true}
5: stream flags 0x10 hi /
control flags 1 {"finished":true}
handler / from C
reset hook from C
terminate hook of 1 from C, its answer written
handler /throw from C
log: request 2 failed: RuntimeException: no in %s
reset hook from PHP
terminate hook of 2 from PHP, its answer written
handler / from C
reset hook from C
terminate hook of 3 from C, its answer written
handler /hook-fails from C
reset hook from C
terminate hook of 4 from C, its answer written
log: terminate hook of job 4 failed: LogicException: hook failed in %s
handler / from C
reset hook from C
terminate hook of 5 from C, its answer written
