<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/** The pure-PHP Codec: a Packer plus a reusable BufferUnpacker. */
final class PureCodec implements Codec
{
    private readonly Packer $packer;
    private readonly BufferUnpacker $unpacker;

    public function __construct(int $options = 0, ?Extensions $extensions = null, int $maxDepth = 512)
    {
        $this->packer = new Packer($options, $extensions);
        $this->unpacker = new BufferUnpacker('', $options, $extensions, $maxDepth);
    }

    public function pack(mixed $value): string
    {
        return $this->packer->pack($value);
    }

    public function unpack(string $data): mixed
    {
        return $this->unpacker->unpackMessage($data);
    }
}
