<?php

declare(strict_types=1);

/**
 * A tiny synchronous Tarantool client (IPROTO CALL only), written the plain blocking way
 * on stream_socket_client(), fwrite() and fread(), with nothing of Ferry in it: the kind of
 * unmodified connector pool.fiber_io is for (TestFiberIOTarantool*).
 */
final class SyncIproto
{
    /** @var resource */
    private $s;
    private int $sync = 0;

    public function __construct(string $addr, float $timeout = 5.0)
    {
        $s = @stream_socket_client("tcp://$addr", $errno, $errstr, 2);
        if ($s === false) {
            throw new RuntimeException("connect: $errno $errstr");
        }
        stream_set_timeout($s, (int) $timeout, (int) (fmod($timeout, 1) * 1e6));
        $this->s = $s;
        $this->read(128); // the greeting: no auth, guest
    }

    public function call(string $function, array $args = []): mixed
    {
        $sync = ++$this->sync;
        // Header {REQUEST_TYPE: CALL, SYNC: n}, body {FUNCTION_NAME, TUPLE}: written as maps
        // by hand, since msgpack_pack() makes a list of [0 => .., 1 => ..].
        $packet = "\x82\x00\x0a\x01" . msgpack_pack($sync) . "\x82\x22" . msgpack_pack($function) . "\x21" . msgpack_pack(array_values($args));
        $out = "\xce" . pack('N', strlen($packet)) . $packet;
        if (fwrite($this->s, $out) !== strlen($out)) {
            throw new RuntimeException('write failed: ' . (error_get_last()['message'] ?? '?'));
        }
        $len = unpack('N', substr($this->read(5), 1))[1];
        $u = new MessagePackUnpacker();
        $u->feed($this->read($len));
        $u->execute();
        $header = $u->data();
        $u->reset();
        $u->execute();
        $body = $u->data();
        if (($header[1] ?? null) !== $sync) {
            throw new RuntimeException('answer for another request: sync ' . json_encode($header[1] ?? null) . ", want $sync");
        }
        if (($header[0] ?? 0) !== 0) {
            throw new RuntimeException('server error: ' . ($body[0x31] ?? '?'));
        }

        return $body[0x30][0] ?? null;
    }

    private function read(int $n): string
    {
        $got = '';
        while (strlen($got) < $n) {
            $chunk = fread($this->s, $n - strlen($got));
            if ($chunk === false || $chunk === '') {
                if (stream_get_meta_data($this->s)['timed_out']) {
                    throw new RuntimeException('read timed out');
                }
                throw new RuntimeException('connection closed');
            }
            $got .= $chunk;
        }

        return $got;
    }
}
