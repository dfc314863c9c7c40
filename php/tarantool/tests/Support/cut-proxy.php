<?php

declare(strict_types=1);

// A TCP proxy in front of a real Tarantool that breaks the first connection at a chosen point
// of the client's byte stream: the one fault of a real network that a test cannot cause on
// demand. Later connections pass through untouched. Started and read by CutProxy.
//
// Config (JSON in argv[1]):
//   upstream           "127.0.0.1:PORT"
//   cut_after_frames   null, or N: forward N whole request frames, then cut_extra_bytes of the
//                      next one, then close the upstream side and reset the client side
//   cut_extra_bytes    bytes of frame N+1 forwarded before the cut
//   hold_before_frame  null, or K: before forwarding frame K, run `eval` (Lua) on a second
//                      connection to the upstream (as eval_uri) and wait for its reply
//
// Reports on stdout, one line each: "port P", "held K", "cut B" (B = bytes forwarded).
// Exits when its stdin closes, so a dying test run takes the proxy with it.

use Ferry\Tarantool\Client;

require __DIR__ . '/../../autoload.php';

$cfg = \json_decode($argv[1] ?? '', true, 8, \JSON_THROW_ON_ERROR) + [
    'cut_after_frames' => null, 'cut_extra_bytes' => 0, 'hold_before_frame' => null, 'eval' => '', 'eval_uri' => '',
];
$server = \stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
if ($server === false) {
    \fwrite(\STDERR, "cannot listen: $errstr\n");
    exit(1);
}
$name = (string) \stream_socket_get_name($server, false);
report('port ' . \substr($name, \strrpos($name, ':') + 1));

/**
 * Pairs by client stream id. Writes never block (out buffers), so a client busy writing a
 * long batch while replies pile up cannot deadlock the proxy.
 * @var array<int, array<string, mixed>>
 */
$pairs = [];
$accepted = 0;

while (true) {
    $read = [$server, \STDIN];
    $write = [];
    foreach ($pairs as $p) {
        $read[] = $p['client'];
        $read[] = $p['upstream'];
        if ($p['toClient'] !== '') {
            $write[] = $p['client'];
        }
        if ($p['toUpstream'] !== '') {
            $write[] = $p['upstream'];
        }
    }
    $except = null;
    if (@\stream_select($read, $write, $except, null) === false) {
        exit(1);
    }
    foreach ($write as $stream) {
        foreach ($pairs as $id => $p) {
            $side = $stream === $p['client'] ? 'toClient' : ($stream === $p['upstream'] ? 'toUpstream' : null);
            if ($side !== null) {
                $n = (int) @\fwrite($stream, $p[$side]);
                $pairs[$id][$side] = (string) \substr($p[$side], $n);
            }
        }
    }
    foreach ($read as $stream) {
        if ($stream === \STDIN) {
            if (\fread(\STDIN, 1024) === '' && \feof(\STDIN)) {
                exit(0);
            }
            continue;
        }
        if ($stream === $server) {
            $client = @\stream_socket_accept($server, 0);
            $upstream = @\stream_socket_client('tcp://' . $cfg['upstream'], $errno, $errstr, 5);
            if ($client === false || $upstream === false) {
                \fwrite(\STDERR, "accept/connect failed: $errstr\n");
                continue;
            }
            \stream_set_blocking($client, false);
            \stream_set_blocking($upstream, false);
            // Only the first connection is watched; the client's retries and failovers pass.
            $pairs[(int) $client] = [
                'client' => $client, 'upstream' => $upstream, 'watched' => $accepted++ === 0,
                'buf' => '', 'frame' => 1, 'forwarded' => 0, 'toClient' => '', 'toUpstream' => '',
            ];
            continue;
        }
        foreach ($pairs as $id => $p) {
            if ($stream !== $p['client'] && $stream !== $p['upstream']) {
                continue;
            }
            $data = @\fread($stream, 65536);
            if ($data === '' && !\feof($stream)) {
                break;
            }
            if ($data === '' || $data === false) {
                // One side closed: pass what is buffered on, then close both.
                foreach (['client' => 'toClient', 'upstream' => 'toUpstream'] as $s => $out) {
                    \stream_set_blocking($p[$s], true);
                    writeAll($p[$s], $p[$out]);
                    @\fclose($p[$s]);
                }
                unset($pairs[$id]);
                break;
            }
            if ($stream === $p['upstream']) {
                $pairs[$id]['toClient'] .= $data;
            } elseif (!$p['watched']) {
                $pairs[$id]['toUpstream'] .= $data;
            } elseif (!forwardWatched($pairs[$id], $data, $cfg)) {
                unset($pairs[$id]);
            }
            break;
        }
    }
}

/**
 * Forwards whole frames of the watched connection, applying the hold and the cut.
 * @param array<string, mixed> $p
 * @param array<string, mixed> $cfg
 * @return bool false once the connection was cut
 */
function forwardWatched(array &$p, string $data, array $cfg): bool
{
    $p['buf'] .= $data;
    while (true) {
        if ($cfg['cut_after_frames'] !== null && $p['frame'] === $cfg['cut_after_frames'] + 1) {
            if (\strlen($p['buf']) < $cfg['cut_extra_bytes']) {
                return true;
            }
            $p['forwarded'] += $cfg['cut_extra_bytes'];
            \stream_set_blocking($p['upstream'], true);
            writeAll($p['upstream'], $p['toUpstream'] . \substr($p['buf'], 0, $cfg['cut_extra_bytes']));
            \fclose($p['upstream']);
            reset_connection($p['client']);
            report('cut ' . $p['forwarded']);
            return false;
        }
        if (\strlen($p['buf']) < 5) {
            return true;
        }
        $size = 5 + \unpack('N', $p['buf'], 1)[1];
        if (\strlen($p['buf']) < $size) {
            return true;
        }
        if ($p['frame'] === $cfg['hold_before_frame']) {
            Client::connect($cfg['eval_uri'])->evaluate($cfg['eval']);
            report('held ' . $p['frame']);
        }
        $p['toUpstream'] .= \substr($p['buf'], 0, $size);
        $p['buf'] = \substr($p['buf'], $size);
        $p['forwarded'] += $size;
        $p['frame']++;
    }
    return true;
}

/**
 * Closes with SO_LINGER 0: the client gets a reset, so a write it has in progress fails at
 * once instead of filling buffers nobody reads.
 * @param resource $stream
 */
function reset_connection($stream): void
{
    $socket = \socket_import_stream($stream);
    \socket_set_option($socket, \SOL_SOCKET, \SO_LINGER, ['l_onoff' => 1, 'l_linger' => 0]);
    \socket_close($socket); // closes the stream's descriptor too
}

/** @param resource $stream */
function writeAll($stream, string $data): void
{
    while ($data !== '') {
        $n = @\fwrite($stream, $data);
        if ($n === false || $n === 0) {
            return;
        }
        $data = \substr($data, $n);
    }
}

function report(string $line): void
{
    \fwrite(\STDOUT, $line . "\n");
    \fflush(\STDOUT);
}
