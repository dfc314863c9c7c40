<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Codec;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Packer;
use Ferry\Tarantool\Exception\ProtocolException;

/** The default codec: php/msgpack with Tarantool's decimal, uuid and error extensions. */
final class PureCodec implements Codec
{
    private Packer $packer;
    private BufferUnpacker $unpacker;

    public function __construct(?Extensions $extensions = null, int $packOptions = 0, int $unpackOptions = 0)
    {
        $extensions ??= Extensions::tarantool();
        $this->packer = new Packer($packOptions, $extensions);
        $this->unpacker = new BufferUnpacker('', $unpackOptions, $extensions);
    }

    public function pack(mixed $value): string
    {
        return $this->packer->pack($value);
    }

    public function unpack(string $data): mixed
    {
        $u = $this->unpacker;
        $u->reset($data);
        try {
            $value = $u->unpack();
        } catch (MsgPackException $e) {
            throw new ProtocolException('Malformed MessagePack in response: ' . $e->getMessage(), 0, $e);
        }
        if ($u->hasRemaining()) {
            throw new ProtocolException(\sprintf('%d trailing bytes after MessagePack value in response', $u->remaining()));
        }
        return $value;
    }
}
