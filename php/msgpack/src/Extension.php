<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * A MessagePack ext type: packs instances of one PHP class and decodes one ext type code.
 * Register implementations in an Extensions set given to Packer / BufferUnpacker.
 */
interface Extension
{
    /** The ext type code, -128..127. Negative codes are reserved by the spec (-1 = timestamp). */
    public function getType(): int;

    /** The class whose instances (subclasses included) this extension packs; null = decode only. */
    public function getClass(): ?string;

    /** The ext payload for $value, without the ext header (the Packer adds it). */
    public function pack(Packer $packer, object $value): string;

    /**
     * Decodes a payload of exactly $length bytes starting at the unpacker's current position,
     * using $unpacker->readBytes() / unpackInt() / unpackValue() ... The unpacker is bounded to
     * the payload while this runs: reading past it or leaving bytes unread raises MsgPackException.
     * Throw MsgPackException (e.g. via $unpacker->fail()) for an invalid payload.
     */
    public function unpack(BufferUnpacker $unpacker, int $length): mixed;
}
