<?php

declare(strict_types=1);

namespace Ferry\Bench\Tarantool;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Packer;

/**
 * The reference the connector's sync select is held to: a minimal hand-written sync IPROTO
 * loop. Same request bytes as the connector's select (limit 0xFFFFFFFF, offset 0, EQ), same
 * codec for the key and the reply body, no objects, no abstraction.
 */
final class Baseline
{
    /** @var resource */
    private $s;
    private int $sync = 0;
    private Packer $packer;
    private BufferUnpacker $unpacker;

    public function __construct(string $uri, private readonly bool $ext)
    {
        $s = \stream_socket_client($uri, $errno, $errstr, 5, \STREAM_CLIENT_CONNECT, \stream_context_create(['socket' => ['tcp_nodelay' => true]]));
        if ($s === false) {
            throw new \RuntimeException("baseline: cannot connect to $uri: $errstr");
        }
        \stream_set_read_buffer($s, 0);
        \fread($s, 128);
        $this->s = $s;
        $this->packer = new Packer();
        $this->unpacker = new BufferUnpacker();
    }

    /** @return float seconds for $revolutions selects by random key */
    public function selects(int $revolutions): float
    {
        $s = $this->s;
        $packer = $this->packer;
        $u = $this->unpacker;
        $ext = $this->ext;
        $rows = null;
        $t = \hrtime(true);
        for ($i = 0; $i < $revolutions; $i++) {
            $key = \mt_rand(1, Server::TUPLES);
            $p = "\x82\x00\x01\x01\xce" . \pack('N', ++$this->sync)
                . "\x86\x10\xcd\x02\x00\x11\x00\x12\xce\xff\xff\xff\xff\x13\x00\x14\x00\x20\x91"
                . ($ext ? \msgpack_pack($key) : $packer->pack($key));
            \fwrite($s, "\xce" . \pack('N', \strlen($p)) . $p);
            $buf = \fread($s, 65536);
            while (\strlen($buf) < 5 || \strlen($buf) < 5 + \unpack('N', $buf, 1)[1]) {
                $buf .= \fread($s, 65536);
            }
            // 5-byte length + Tarantool's fixed 23-byte header; the rest is the body map.
            if ($ext) {
                $rows = \msgpack_unpack(\substr($buf, 28))[0x30];
            } else {
                $u->reset(\substr($buf, 28));
                $rows = $u->unpack()[0x30];
            }
        }
        $elapsed = (\hrtime(true) - $t) / 1e9;
        if (!\is_array($rows) || \count($rows) !== 1) {
            throw new \RuntimeException('baseline: unexpected reply');
        }
        return $elapsed;
    }
}
