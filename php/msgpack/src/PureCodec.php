<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/** The pure-PHP Codec: a Packer plus a reusable BufferUnpacker. */
final class PureCodec implements Codec
{
    private readonly Packer $packer;
    private readonly BufferUnpacker $unpacker;
    /** unpackMessage() runs on ext/ferry: call it without the method hop */
    private readonly bool $nativeUnpack;

    public function __construct(int $options = 0, ?Extensions $extensions = null, int $maxDepth = 512)
    {
        $this->packer = new Packer($options, $extensions);
        $this->unpacker = new BufferUnpacker('', $options, $extensions, $maxDepth);
        $this->nativeUnpack = $this->unpacker->isNative();
    }

    public function pack(mixed $value): string
    {
        return $this->packer->pack($value);
    }

    public function unpack(string $data): mixed
    {
        return $this->nativeUnpack
            ? \Ferry\Ext\msgpack_unpack_message($this->unpacker, $data)
            : $this->unpacker->unpackMessage($data);
    }
}
