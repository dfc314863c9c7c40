<?php
// A deliberately tiny, SDK-free worker used by the pool tests: it speaks the
// frame protocol by hand so pool behaviour is tested independently of php/worker.
// Jobs: "echo:<x>" answers x; "crash" exits; "sleep:<ms>" sleeps then answers;
// "die:<ms>" sleeps then exits; "error" answers an ERROR frame; "leak:<kib>" keeps memory; "pid" answers getmypid();
// "parts:<n>,<ms>" streams n parts <ms> apart, then answers "end";
// "seen" answers the jobs this process has received so far, one per line (clipped);
// "spool", "spoolexit", "spooldie": a file in FERRY_SPOOL_DIR (see the case);
// "hold:<file>" answers once <file> exists, "holddie:<file>" exits then: tests open the gate when ready.
// FERRY_DIRECT_FD set (direct mode): the handshake says "direct":true. SPAWN_LOG=<file> appends a line per process started; EXIT_AFTER_HANDSHAKE=<file> exits once ready if <file> exists.
// HOLD_BOOT=<file>: the first process to find <file> renames it to <file>.held and waits for the test to remove that before its handshake.
declare(strict_types=1);

function frame(int $flags, array $opts, string $payload, int $byte10 = 0): string {
    $h = chr(0x10 | (3 + count($opts))) . chr($flags) . pack('V', strlen($payload));
    $h .= pack('V', crc32($h)) . chr($byte10) . "\0";
    foreach ($opts as $o) { $h .= pack('V', $o); }
    return $h . $payload;
}

$relay = getenv('FERRY_RELAY') ?: 'pipes';
if ($relay === 'pipes' || $relay === 'stdio') { $in = STDIN; $out = STDOUT; }
elseif (preg_match('/^pipes:(\d+),(\d+)$/', $relay, $m)) { $in = fopen("php://fd/$m[1]", 'rb'); $out = fopen("php://fd/$m[2]", 'wb'); }
else { $in = $out = stream_socket_client($relay, $e, $s, 5); }
$token = getenv('FERRY_RELAY_TOKEN');
if ($log = getenv('SPAWN_LOG')) { file_put_contents($log, getmypid() . "\n", FILE_APPEND | LOCK_EX); }
if (($hold = getenv('HOLD_BOOT')) && @rename($hold, "$hold.held")) {
    while (file_exists("$hold.held")) { usleep(2000); clearstatcache(); }
}
if (getenv('STRAY_ECHO')) { echo "Hello before handshake\n"; }
$buf = '';
$leak = [];
$seen = [];
$read = function (int $n) use ($in, &$buf): ?string {
    while (strlen($buf) < $n) {
        $c = fread($in, 65536);
        if ($c === false || $c === '') { return null; }
        $buf .= $c;
    }
    $r = substr($buf, 0, $n); $buf = substr($buf, $n); return $r;
};
while (true) {
    $h = $read(12);
    if ($h === null) { exit(0); }
    $nopt = (ord($h[0]) & 0x0f) - 3;
    $flags = ord($h[1]);
    $len = unpack('V', substr($h, 2, 4))[1];
    $opts = $nopt ? array_values(unpack('V*', $read(4 * $nopt))) : [];
    $payload = $len ? $read($len) : '';
    if ($flags & 0x01) {
        $msg = json_decode($payload, true);
        if (isset($msg['stop'])) { exit(0); }
        $hello = ['pid' => getmypid()];
        if ($token !== false && $token !== '') { $hello['token'] = $token; }
        if (getenv('FERRY_DIRECT_FD') !== false) { $hello['direct'] = true; }
        fwrite($out, frame(0x09, [], json_encode($hello)));
        if (($f = getenv('EXIT_AFTER_HANDSHAKE')) && file_exists($f)) { exit(0); }
        continue;
    }
    [$ctxLen, $id] = $opts;
    $body = substr($payload, $ctxLen);
    $seen[] = substr($body, 0, 64);
    [$cmd, $arg] = explode(':', $body . ':', 3);
    switch ($cmd) {
        case 'crash': exit(3);
        case 'die': usleep((int)$arg * 1000); exit(3);
        case 'sleep': usleep((int)$arg * 1000); $ans = "slept $arg"; break;
        case 'hold': case 'holddie':
            while (!file_exists($arg)) { usleep(2000); clearstatcache(); }
            if ($cmd === 'holddie') { exit(3); }
            $ans = 'released'; break;
        case 'error': fwrite($out, frame(0x40, [0, $id], 'it failed')); continue 2;
        case 'leak': $leak[] = str_repeat('x', (int)$arg * 1024); $ans = 'leaked'; break;
        case 'pid': $ans = (string)getmypid(); break;
        case 'parts': // "parts:<n>,<ms>": n STREAM parts <ms> apart (the first with the context), then the end
            [$n, $ms] = array_map('intval', explode(',', $arg));
            for ($i = 1; $i <= $n; $i++) {
                if ($i > 1) { usleep($ms * 1000); }
                fwrite($out, $i === 1 ? frame(0x04, [3, $id], "ctxp$i;", 0x01) : frame(0x04, [0, $id], "p$i;", 0x01));
            }
            usleep($ms * 1000);
            $ans = 'end'; break;
        case 'seen': $ans = implode("\n", $seen); break;
        case 'spool': case 'spoolexit': case 'spooldie':
            // A file in FERRY_SPOOL_DIR, then: answered with a head naming it, the same and
            // exit at once (a worker retired after its answer), or exit unanswered (killed).
            $path = getenv('FERRY_SPOOL_DIR') . "/out-$id";
            file_put_contents($path, 'spooled');
            if ($cmd === 'spooldie') { exit(3); }
            $head = json_encode(['file' => ['path' => $path]]);
            fwrite($out, frame(0x04, [strlen($head), $id], $head));
            if ($cmd === 'spoolexit') { exit(0); }
            continue 2;
        case 'retireexit': // as after a PHP fatal error: asks to stop, answers, exits at once
            fwrite($out, frame(0x09, [], '{"stop":true}') . frame(0x04, [3, $id], 'ctxanswered'));
            exit(255);
        case 'retire':
            fwrite($out, frame(0x04, [3, $id], 'ctxretiring') . frame(0x09, [], '{"stop":true}'));
            continue 2;
        default: $ans = $arg;
    }
    fwrite($out, frame(0x04, [3, $id], 'ctx' . $ans));
}
