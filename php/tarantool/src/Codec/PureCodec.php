<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Codec;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extensions;
use Ferry\MsgPack\MsgPackException;
use Ferry\MsgPack\Packer;
use Ferry\Tarantool\Exception\ProtocolException;

/**
 * The default codec: php/msgpack with Tarantool's decimal, uuid and error extensions. It runs
 * ext/ferry's C codec when that extension is loaded (php/msgpack picks it; the ini setting
 * ferry.msgpack_php_only=1 keeps pure PHP), with the same values and errors.
 */
final class PureCodec implements Codec
{
    private Packer $packer;
    private BufferUnpacker $unpacker;
    /** @var array{int, int, \Closure, array<string, \Ferry\MsgPack\Extension>}|null ext/ferry's packer, called without the Packer::pack() hop */
    private ?array $native;
    /** unpackMessage() runs in C: call it without the method hop */
    private bool $nativeUnpack;

    public function __construct(?Extensions $extensions = null, int $packOptions = 0, int $unpackOptions = 0)
    {
        $extensions ??= Extensions::tarantool();
        $this->packer = new Packer($packOptions, $extensions);
        $this->unpacker = new BufferUnpacker('', $unpackOptions, $extensions);
        $this->native = $this->packer->nativeArgs();
        $this->nativeUnpack = $this->unpacker->isNative();
    }

    public function pack(mixed $value): string
    {
        if ($this->native !== null) {
            return \Ferry\Ext\msgpack_pack($value, ...$this->native);
        }
        return $this->packer->pack($value);
    }

    public function unpack(string $data): mixed
    {
        try {
            return $this->nativeUnpack
                ? \Ferry\Ext\msgpack_unpack_message($this->unpacker, $data)
                : $this->unpacker->unpackMessage($data);
        } catch (MsgPackException $e) {
            throw new ProtocolException('Malformed MessagePack in response: ' . $e->getMessage(), 0, $e);
        }
    }
}
