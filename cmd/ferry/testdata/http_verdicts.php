<?php
// Puts each raw connection's bytes of a JSON table (stdin: {"limits": {...}, "cases":
// [base64, ...]}) through ext/ferry's HTTP parser the way a direct-mode worker reads a
// connection, and prints, per case, the answers the client would get: one
// {status, method, uri, host} per request, the last one a refusal or the end of the bytes.
// The client half-closes after its bytes, and the front answers a request cut short 400
// (its head: fasthttp's "error when reading request headers"; its body: the front's
// "request body could not be read").
// PHP's host is the parser's, lowercased (ASCII) as fasthttp's URI lowercases it.
declare(strict_types=1);

use function Ferry\Ext\http_decode_chunked;
use function Ferry\Ext\http_parse_head;

// The refusals of the front's own checks (internal/gateway/check.go), after fasthttp's.
const CHECKED = [
    'HTTP version not supported' => 1, 'invalid request target' => 1, 'too many request header fields' => 1,
    'more than one Host header' => 1, 'missing required Host header' => 1, 'invalid Host header' => 1,
    'both Content-Length and Transfer-Encoding' => 1, 'CONNECT is not supported' => 1,
    'request body larger than max_body_size' => 1,
];

$in = json_decode((string)stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
$limits = $in['limits'];
$out = [];
foreach ($in['cases'] as $b64) {
    $buf = base64_decode($b64, true);
    $answers = [];
    while ($buf !== '') {
        $quirk = false;
        $r = http_parse_head($buf, $limits);
        if ($r['status'] === 1) {
            if (trim($buf, "\r\n") !== '') {
                // fasthttp answers a head cut short by the end of input 400 (CRs and LFs
                // alone it takes for a client's stray line ends)
                $answers[] = ['status' => 400, 'error' => 'head cut short'];
            }
            break;
        }
        $rest = substr($buf, $r['consumed']);
        if ($r['status'] !== 0 && $r['content_length'] > 0 && isset(CHECKED[$r['error']])
            && strlen($rest) < min($r['content_length'], $limits['max_body'], 8192)) {
            // fasthttp reads that much of a body before the front checks the head: the
            // client's end of input comes first (see verdict.EOF)
            $r['status'] = 400;
            $r['eof'] = true;
        }
        if ($r['status'] === 400 && str_starts_with((string)$r['error'], 'obsolete line folding') && !str_contains($rest, ':')
            && preg_match('/\n[ \t]([^\n]*[ \t])?\r?\n\r?\n$/', substr($buf, 0, $r['consumed'])) === 1) {
            // fasthttp, unfolding a last field whose last line ends in blanks, loses its
            // place and waits for a colon; at the end of input it parses its read buffer
            // again, every fold before it unfolded by then, and the front judges that head
            // (see verdict.Reparsed)
            $unfolded = preg_replace('/\r?\n[ \t]+/', ' ', substr($buf, 0, $r['consumed']));
            $again = http_parse_head($unfolded, $limits);
            $answers[] = ['status' => $again['status'] === 0 ? 200 : $again['status'], 'reparsed' => true];
            break;
        }
        if ($r['status'] !== 0) {
            $answers[] = ['status' => $r['status'], 'error' => $r['error']] + (isset($r['eof']) ? ['eof' => true] : []);
            break;
        }
        // the front answers OPTIONS * itself, and closes when its body is broken or too large
        $asterisk = $r['method'] === 'OPTIONS' && $r['target'] === '*';
        if ($r['chunked']) {
            $d = http_decode_chunked($rest, $limits['max_body'], $limits['max_head']);
            if ($d['status'] === 1 && $d['trailer']) {
                // the front takes the end of input in the trailer section for its end
                $d = ['status' => 0, 'consumed' => strlen($rest)] + $d;
            }
            if ($d['status'] === 413 && strlen($rest) - $d['consumed'] + strlen($d['body']) <= $limits['max_body']) {
                // the front counts the chunk's bytes as they come: too few came (verdict.EOF)
                $d['status'] = 400;
                $d['eof'] = true;
            }
            if ($d['status'] !== 0) {
                $answers[] = $asterisk ? ['status' => 200, 'method' => 'OPTIONS', 'uri' => '*']
                    : ['status' => $d['status'] === 1 ? 400 : $d['status'], 'error' => 'chunked body'] + (isset($d['eof']) ? ['eof' => true] : []);
                break;
            }
            // fasthttp skips three bytes of a trailer section that starts with '0' and
            // then discards three bytes too few: the front answers those as one more
            // request (see verdict.Quirk)
            for ($k = 1; $k <= $d['consumed'] && $d['status'] === 0; $k++) {
                $part = http_decode_chunked(substr($rest, 0, $k), $limits['max_body'], $limits['max_head']);
                if ($part['trailer']) {
                    $quirk = ($rest[$k] ?? '') === '0';
                    break;
                }
            }
            $rest = substr($rest, $d['consumed']);
        } elseif ($r['content_length'] > 0) {
            if (strlen($rest) < $r['content_length'] || ($asterisk && $r['content_length'] > $limits['max_body'])) {
                $answers[] = $asterisk ? ['status' => 200, 'method' => 'OPTIONS', 'uri' => '*']
                    : ['status' => 400, 'error' => 'body cut short'];
                break;
            }
            $rest = substr($rest, $r['content_length']);
        }
        $q = $r['query'] === null ? '' : '?' . $r['query'];
        $answers[] = ['status' => 200, 'method' => $r['method'], 'uri' => $r['path'] . $q, 'host' => strtolower((string)$r['host']),
            'keep_alive' => $r['keep_alive'], 'quirk' => $quirk];
        if (!$r['keep_alive']) {
            break;
        }
        $buf = $rest;
    }
    $out[] = $answers;
}
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR);
