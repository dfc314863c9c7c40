<?php

declare(strict_types=1);

/**
 * A synchronous IPROTO client written the plain blocking way (stream_socket_client(),
 * fwrite(), fread()), as connectors like tarantool/client are: nothing in it knows of Ferry's
 * loop or of Fibers. Bench scenario "fiberio" measures it under pool.fiber_io against
 * Ferry's own async connector. Only CALL, enough for the bench; msgpack by the msgpack
 * extension, the fixed-shape request header by hand (the extension packs int-keyed arrays
 * as lists, IPROTO wants maps).
 */
final class SyncTarantool
{
    private const CALL = 0x0a;

    /** @var resource */
    private $socket;
    private int $sync = 0;

    public function __construct(string $uri, float $timeout = 5.0)
    {
        $s = stream_socket_client($uri, $errno, $errstr, $timeout);
        if ($s === false) {
            throw new RuntimeException("connect $uri: $errno $errstr");
        }
        $this->socket = $s;
        stream_set_timeout($s, (int) $timeout, (int) (fmod($timeout, 1.0) * 1e6));
        $this->read(128); // the greeting: version and salt; guest needs no auth
    }

    /**
     * @param list<mixed> $args
     * @return list<mixed> what the procedure returned
     */
    public function call(string $function, array $args): array
    {
        $sync = ++$this->sync;
        $header = "\x82\x00" . chr(self::CALL) . "\x01\xce" . pack('N', $sync);
        $body = "\x82\x22" . msgpack_pack($function) . "\x21" . msgpack_pack($args);
        $packet = $header . $body;
        $this->write("\xce" . pack('N', strlen($packet)) . $packet);

        $len = unpack('N', substr($this->read(5), 1))[1];
        $data = $this->read($len);
        $u = new MessagePackUnpacker();
        $off = 0;
        if (!$u->execute($data, $off)) {
            throw new RuntimeException('bad response header');
        }
        $head = $u->data();
        $u->reset();
        if (!$u->execute($data, $off)) {
            throw new RuntimeException('bad response body');
        }
        $resp = $u->data();
        if (($head[0x01] ?? null) !== $sync) {
            throw new RuntimeException("response for sync {$head[0x01]}, want $sync");
        }
        if (($head[0x00] ?? 0) !== 0) {
            throw new RuntimeException('tarantool error: ' . ($resp[0x31] ?? json_encode($resp)));
        }

        return $resp[0x30];
    }

    private function write(string $data): void
    {
        while ($data !== '') {
            $n = fwrite($this->socket, $data);
            if ($n === false || $n === 0) {
                throw new RuntimeException('write failed');
            }
            $data = substr($data, $n);
        }
    }

    private function read(int $n): string
    {
        $out = '';
        while (strlen($out) < $n) {
            $chunk = fread($this->socket, $n - strlen($out));
            if ($chunk === false || $chunk === '') {
                $meta = stream_get_meta_data($this->socket);
                throw new RuntimeException($meta['timed_out'] ? 'read timed out' : 'connection closed');
            }
            $out .= $chunk;
        }

        return $out;
    }
}
