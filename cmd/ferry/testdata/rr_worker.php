<?php

declare(strict_types=1);

/*
 * The PHP side of RoadRunner's HTTP protocol, written from its specification
 * so that Ferry's end-to-end tests can run without spiral/roadrunner-* (not
 * installable here). Every byte it reads and writes follows what
 * roadrunner-worker and roadrunner-http do; where each fact comes from:
 *
 * [F] roadrunner-php/goridge src/Frame.php: header = byte 0 version 1 << 4 |
 *     (3 + count(options)), byte 1 flags, bytes 2-5 payload length (uint32 LE),
 *     bytes 6-9 crc32 of bytes 0-5 (LE), byte 10 "byte10" flags, byte 11 zero,
 *     then the options (uint32 LE) and the payload. Flags: CONTROL 0x01,
 *     CODEC_JSON 0x08, ERROR 0x40, CODEC_PROTO 0x80. byte10: STREAM 0x01,
 *     STOP 0x02, PING 0x04, PONG 0x08.
 * [E] roadrunner-worker src/Environment.php: the relay address is RR_RELAY
 *     ("pipes" = STDIN/STDOUT, tcp://host:port, unix://path), default "pipes".
 * [W] roadrunner-worker src/Worker.php and PayloadFactory.php: a CONTROL frame
 *     whose JSON has "pid" is answered with CONTROL {"pid":getmypid()} and no
 *     options; a CONTROL {"stop":true} ends waitPayload(); a job's context is
 *     payload[0:options[0]], the rest is the body. respond() sends options
 *     [strlen(header)], the codec flag it is given, STREAM in byte10 unless
 *     end of stream; error() sends an ERROR frame with no options; stop()
 *     sends a normal frame whose header is {"stop":true} and body is empty.
 *     In stream mode every fifth chunk carries PING, and the worker then
 *     looks for a PONG (or a STOP frame) without blocking.
 * [H] roadrunner-http src/HttpWorker.php: the codec is chosen once, from the
 *     first request: a JSON context means JSON, anything else is an
 *     http.v1.Request in protobuf; the answer goes back in the same codec, as
 *     http.v1.Response {status, headers} or {"status":N,"headers":{...}}.
 *     Uploads are JSON in both; a parsed body is a JSON tree. A 1xx status is
 *     sent as a stream chunk before the final answer.
 * [P] roadrunner-server/api proto/http/v1/http.proto: Request fields 1
 *     remote_addr, 2 protocol, 3 method, 4 uri, 5 header, 6 cookies, 7
 *     raw_query, 8 parsed, 9 uploads, 10 attributes; maps of HeaderValue
 *     {repeated string value = 1}; Response 1 status (int64), 2 headers.
 * [T] roadrunner-http tests/Server/Command/StreamStop.php and roadrunner-worker
 *     src/PayloadFactory.php: the server stops a stream with a frame whose flags
 *     are 0, options [0], payload empty and byte10 STOP; the worker takes any
 *     frame with STOP in byte10 as StreamStop, and waitPayload() skips a late one.
 *     HttpWorker::respondStream() looks for it before each chunk
 *     (getPayload(StreamStop::class)), throws StreamStoppedException into the
 *     generator and answers respond(new Payload('')), an empty non-stream
 *     frame, "RoadRunner is waiting for a Stream Stop Frame to confirm that the
 *     stream is closed". In the JSON codec only the first chunk has a header.
 * [D] docs.roadrunner.dev/http/resp-streaming: "You may send a 103 Early Hints
 *     status code (or any 1XX status code) to the client at any time during
 *     streaming", as respond(103, '', $headers, endOfStream: false).
 * [S] roadrunner-http src/PSR7Worker.php: uploads become UploadedFile objects
 *     from {name, mime, size, error, tmpName}; cookies, query, parsed body
 *     and headers go on the ServerRequest.
 *
 * RR_TEST_APP names a PHP file returning a PSR-15-like closure that then
 * answers every request, as an app behind PSR7Worker (bench/apps/roadrunner).
 * RR_TEST_JSON_ONLY=1 makes it a roadrunner-http older than 3.5, which only
 * understands the JSON context. RR_TEST_STOP_FLAG names a file: the first
 * worker to create it answers /stop with Worker::stop(), the others serve it.
 */

require '/usr/share/php/Nyholm/Psr7/autoload.php';

use Nyholm\Psr7\Factory\Psr17Factory;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\UploadedFileInterface;

const CONTROL = 0x01;
const CODEC_JSON = 0x08;
const ERROR = 0x40;
const CODEC_PROTO = 0x80;
const STREAM = 0x01;
const STOP = 0x02;
const PING = 0x04;
const PONG = 0x08;

final class Relay
{
    /** @var resource */
    private $in;
    /** @var resource */
    private $out;

    public function __construct(string $addr)
    {
        if ($addr === 'pipes') {
            $this->in = STDIN;
            $this->out = STDOUT;
            return;
        }
        $s = stream_socket_client($addr, $no, $msg, 5);
        if ($s === false) {
            fwrite(STDERR, "cannot connect to $addr: $msg\n");
            exit(1);
        }
        $this->in = $this->out = $s;
    }

    /** [F] */
    public function send(int $flags, int $byte10, array $options, string $payload): void
    {
        $head = pack('CCV', 1 << 4 | (3 + count($options)), $flags, strlen($payload));
        $head .= pack('VCC', crc32($head), $byte10, 0);
        foreach ($options as $o) {
            $head .= pack('V', $o);
        }
        $data = $head . $payload;
        for ($off = 0; $off < strlen($data); $off += $n) {
            $n = fwrite($this->out, substr($data, $off));
            if ($n === false || $n === 0) {
                exit(1);
            }
        }
        fflush($this->out);
    }

    /** @var list<array> frames read while streaming, served next (Worker::$payloads) */
    public array $queue = [];

    /** @return array{int, int, list<int>, string}|null flags, byte10, options, payload */
    public function read(): ?array
    {
        return array_shift($this->queue) ?? $this->readWire();
    }

    public function readWire(): ?array
    {
        $h = $this->exactly(12);
        if ($h === null) {
            return null;
        }
        $words = ord($h[0]) & 0x0f;
        $len = unpack('V', substr($h, 2, 4))[1];
        if (unpack('V', substr($h, 6, 4))[1] !== crc32(substr($h, 0, 6))) {
            fwrite(STDERR, "bad CRC\n");
            exit(1);
        }
        $opts = $words > 3 ? array_values(unpack('V*', $this->exactly(4 * ($words - 3)))) : [];
        $payload = $len > 0 ? $this->exactly($len) : '';
        return [ord($h[1]), ord($h[10]), $opts, $payload];
    }

    public function ready(): bool
    {
        $r = [$this->in];
        $w = $e = null;
        return stream_select($r, $w, $e, 0) > 0;
    }

    private function exactly(int $n): ?string
    {
        $buf = '';
        while (strlen($buf) < $n) {
            $chunk = fread($this->in, $n - strlen($buf));
            if ($chunk === false || ($chunk === '' && feof($this->in))) {
                return null;
            }
            $buf .= $chunk;
        }
        return $buf;
    }
}

/** [P] protobuf wire format, the two messages only. */
final class Proto
{
    public static function varint(string $b, int &$i): int
    {
        $v = 0;
        for ($shift = 0; ; $shift += 7) {
            $c = ord($b[$i++]);
            $v |= ($c & 0x7f) << $shift;
            if ($c < 0x80) {
                return $v;
            }
        }
    }

    /** @return list<array{int, int|string}> field number and value */
    public static function fields(string $b): array
    {
        $out = [];
        for ($i = 0; $i < strlen($b);) {
            $tag = self::varint($b, $i);
            if (($tag & 7) === 0) {
                $out[] = [$tag >> 3, self::varint($b, $i)];
            } else {
                $n = self::varint($b, $i);
                $out[] = [$tag >> 3, substr($b, $i, $n)];
                $i += $n;
            }
        }
        return $out;
    }

    /** @return array<string, list<string>> */
    public static function map(array $entries): array
    {
        $m = [];
        foreach ($entries as $e) {
            $key = '';
            $vals = [];
            foreach (self::fields($e) as [$n, $v]) {
                if ($n === 1) {
                    $key = $v;
                } else {
                    foreach (self::fields($v) as [, $x]) {
                        $vals[] = $x;
                    }
                }
            }
            $m[$key] = $vals;
        }
        return $m;
    }

    public static function request(string $b): array
    {
        $r = ['remoteAddr' => '', 'protocol' => '', 'method' => '', 'uri' => '', 'rawQuery' => '',
            'parsed' => false, 'uploads' => '', 'header' => [], 'cookies' => [], 'attributes' => []];
        $names = [1 => 'remoteAddr', 2 => 'protocol', 3 => 'method', 4 => 'uri', 7 => 'rawQuery', 9 => 'uploads'];
        $maps = [5 => 'header', 6 => 'cookies', 10 => 'attributes'];
        foreach (self::fields($b) as [$n, $v]) {
            if (isset($names[$n])) {
                $r[$names[$n]] = $v;
            } elseif (isset($maps[$n])) {
                $r[$maps[$n]][] = $v;
            } elseif ($n === 8) {
                $r['parsed'] = $v !== 0;
            }
        }
        foreach ($maps as $k) {
            $r[$k] = self::map($r[$k]);
        }
        return $r;
    }

    public static function bytes(int $field, string $s): string
    {
        return self::tag($field, 2) . self::uvarint(strlen($s)) . $s;
    }

    public static function tag(int $field, int $type): string
    {
        return self::uvarint($field << 3 | $type);
    }

    public static function uvarint(int $v): string
    {
        $out = '';
        while ($v >= 0x80) {
            $out .= chr($v & 0x7f | 0x80);
            $v >>= 7;
        }
        return $out . chr($v);
    }

    public static function response(int $status, array $headers): string
    {
        $b = self::tag(1, 0) . self::uvarint($status);
        foreach ($headers as $k => $vs) {
            $hv = '';
            foreach ((array)$vs as $v) {
                $hv .= self::bytes(1, (string)$v);
            }
            $b .= self::bytes(2, self::bytes(1, (string)$k) . self::bytes(2, $hv));
        }
        return $b;
    }
}

$relay = new Relay(getenv('RR_RELAY') ?: 'pipes');
$codec = null;
$jsonOnly = getenv('RR_TEST_JSON_ONLY') === '1';
$factory = new Psr17Factory();

/** [H] one answer frame: the head in the request's codec, then the body. */
$respond = static function (int $status, array $headers, string $body, bool $eos = true, int $byte10 = 0)
    use ($relay, &$codec): void {
    $head = $codec === CODEC_PROTO
        ? Proto::response($status, $headers)
        : json_encode(['status' => $status, 'headers' => $headers ?: (object)[]], JSON_THROW_ON_ERROR);
    $relay->send($codec, ($eos ? 0 : STREAM) | $byte10, [strlen($head)], $head . $body);
};

while (true) {
    $f = $relay->read();
    if ($f === null) {
        exit(0);
    }
    [$flags, $byte10, $opts, $payload] = $f;
    if ($flags & CONTROL) { // [W]
        $cmd = json_decode($payload, true, 512, JSON_THROW_ON_ERROR);
        if (!empty($cmd['stop'])) {
            exit(0);
        }
        if (!empty($cmd['pid'])) {
            $relay->send(CONTROL, 0, [], json_encode(['pid' => getmypid()]));
        }
        continue;
    }
    if ($byte10 & (PONG | STOP)) {
        continue; // late answers to a stream, as waitPayload() skips them
    }
    $ctx = substr($payload, 0, $opts[0]);
    $body = substr($payload, $opts[0]);
    if ($codec === null) { // [H]
        json_decode($ctx);
        $codec = ($jsonOnly || json_last_error() === JSON_ERROR_NONE) ? CODEC_JSON : CODEC_PROTO;
    }
    if ($codec === CODEC_PROTO) {
        $r = Proto::request($ctx);
        $cookies = array_map(static fn (array $v): string => implode(',', $v), $r['cookies']);
        $uploads = json_decode($r['uploads'] ?: 'null', true) ?? [];
    } else {
        $j = json_decode($ctx, true, 512, JSON_THROW_ON_ERROR);
        $r = ['remoteAddr' => $j['remoteAddr'], 'protocol' => $j['protocol'], 'method' => $j['method'],
            'uri' => $j['uri'], 'rawQuery' => $j['rawQuery'], 'parsed' => $j['parsed'],
            'header' => (array)($j['headers'] ?? [])];
        $cookies = (array)($j['cookies'] ?? []);
        $uploads = (array)($j['uploads'] ?? []);
    }
    // [S] the ServerRequest PSR7Worker builds.
    parse_str($r['rawQuery'], $query);
    $req = $factory->createServerRequest($r['method'], $r['uri'], ['REMOTE_ADDR' => $r['remoteAddr']])
        ->withProtocolVersion(substr($r['protocol'], 5))
        ->withCookieParams($cookies)
        ->withQueryParams($query)
        ->withUploadedFiles(wrapUploads($factory, $uploads));
    foreach ($r['header'] as $name => $values) {
        $req = $req->withHeader($name, $values);
    }
    if ($r['parsed']) {
        $req = $req->withParsedBody((array)json_decode($body === '' ? '{}' : $body, true, 512, JSON_THROW_ON_ERROR));
    } elseif ($body !== '') {
        $req = $req->withBody($factory->createStream($body));
    }
    handle($req, $respond, $relay);
}

function wrapUploads(Psr17Factory $f, array $files): array
{
    $out = [];
    foreach ($files as $k => $file) {
        if (!isset($file['name'])) {
            $out[$k] = wrapUploads($f, $file);
            continue;
        }
        $stream = $file['error'] === UPLOAD_ERR_OK ? $f->createStreamFromFile($file['tmpName']) : $f->createStream();
        $out[$k] = $f->createUploadedFile($stream, $file['size'], $file['error'], $file['name'], $file['mime']);
    }
    return $out;
}

function describeUploads(array $files): array
{
    $out = [];
    foreach ($files as $k => $f) {
        $out[$k] = $f instanceof UploadedFileInterface
            ? ['class' => get_class($f), 'name' => $f->getClientFilename(), 'type' => $f->getClientMediaType(),
                'size' => $f->getSize(), 'error' => $f->getError(),
                'content' => $f->getError() === UPLOAD_ERR_OK ? (string)$f->getStream() : '']
            : describeUploads($f);
    }
    return $out;
}

function handle(ServerRequestInterface $req, Closure $respond, Relay $relay): void
{
    static $app = null;
    if ($app === null && ($file = getenv('RR_TEST_APP')) !== false) {
        $app = require $file; // bench/apps/roadrunner: fn (ServerRequestInterface): ResponseInterface
    }
    if ($app !== null) {
        $resp = $app($req); // [S] PSR7Worker::respond()
        $respond($resp->getStatusCode(), $resp->getHeaders(), (string)$resp->getBody());
        return;
    }
    $path = $req->getUri()->getPath();
    switch ($path) {
        case '/':
            $respond(200, ['Content-Type' => ['text/plain']], 'Hello from RoadRunner worker ' . getmypid());
            return;
        case '/echo':
            $respond(200, ['Content-Type' => ['application/json']], json_encode([
                'pid' => getmypid(),
                'method' => $req->getMethod(),
                'uri' => (string)$req->getUri(),
                'protocol' => $req->getProtocolVersion(),
                'remote' => $req->getServerParams()['REMOTE_ADDR'],
                'headers' => (object)$req->getHeaders(),
                'cookies' => (object)$req->getCookieParams(),
                'query' => (object)$req->getQueryParams(),
                'parsed' => $req->getParsedBody(),
                'uploads' => describeUploads($req->getUploadedFiles()),
                'body' => (string)$req->getBody(),
            ], JSON_THROW_ON_ERROR));
            return;
        case '/headers':
            $respond(201, ['Set-Cookie' => ['a=1; Path=/', 'b=2; Path=/'], 'X-Multi' => ['one', 'two']], 'made');
            return;
        case '/stop':
            $flag = getenv('RR_TEST_STOP_FLAG');
            if ($flag !== false && @fopen($flag, 'x') !== false) {
                // [W] Worker::stop(): the request is not served here.
                $relay->send(0, 0, [strlen('{"stop":true}')], '{"stop":true}');
                return;
            }
            $respond(200, ['Content-Type' => ['text/plain']], 'served by ' . getmypid());
            return;
        case '/error':
            $relay->send(ERROR, 0, [], 'boom from the worker'); // [W] error()
            return;
        case '/stream':
            // [H][D] a 1xx first, then chunks with STREAM (the fifth with PING), then the end.
            $respond(103, ['Link' => ['</style.css>; rel=preload; as=style']], '', false);
            $headers = ['Content-Type' => ['text/plain'], 'X-Streamed' => ['yes']];
            for ($i = 1; $i <= 6; $i++) {
                $respond(200, $headers, "chunk$i;", false, $i === 5 ? PING : 0);
                while ($i >= 5 && $relay->ready()) {
                    $f = $relay->readWire(); // the PONG, a STOP, or the next job kept for later
                    if ($f === null || ($f[1] & PONG)) {
                        break;
                    }
                    if ($f[1] & STOP) {
                        $relay->send(0, 0, [0], ''); // HttpWorker: respond(new Payload(''))
                        return;
                    }
                    $relay->queue[] = $f;
                }
            }
            $respond(200, $headers, 'end', true);
            return;
        case '/endless':
            // [T] respondStream(): the head goes with the first chunk only; before
            // each chunk the worker looks for a STOP frame, and on one it answers
            // with an empty, non-stream frame. [W] every fifth chunk carries PING.
            for ($i = 1; ; $i++) {
                while ($relay->ready()) {
                    $f = $relay->readWire();
                    if ($f === null || ($f[1] & STOP)) {
                        $relay->send(0, 0, [0], '');
                        if (($dir = getenv('RR_TEST_DIR')) !== false) {
                            file_put_contents("$dir/stopped", (string)$i);
                        }
                        return;
                    }
                    if (!($f[1] & PONG)) {
                        $relay->queue[] = $f;
                    }
                }
                $body = "tick$i;";
                if ($i === 1) {
                    $respond(200, ['Content-Type' => ['text/plain']], $body, false);
                } else {
                    $relay->send($GLOBALS['codec'], STREAM | ($i % 5 === 0 ? PING : 0), [0], $body);
                }
                usleep(10_000);
            }
    }
    $respond(404, ['Content-Type' => ['text/plain']], 'no route ' . $path);
}
