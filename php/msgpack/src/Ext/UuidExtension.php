<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;

/** Tarantool MP_UUID (ext 2): exactly 16 bytes, fields big-endian in RFC 4122 order (so fixext16). */
final class UuidExtension implements Extension
{
    public function getType(): int
    {
        return 2;
    }

    public function getClass(): ?string
    {
        return Uuid::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof Uuid);
        return $value->toBytes();
    }

    public function unpack(BufferUnpacker $unpacker, int $length): Uuid
    {
        if ($length !== 16) {
            throw $unpacker->fail("uuid payload is $length bytes, expected 16");
        }
        return Uuid::fromBytes($unpacker->readBytes(16));
    }
}
