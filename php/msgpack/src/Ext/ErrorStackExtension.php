<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

use Ferry\MsgPack\BufferUnpacker;
use Ferry\MsgPack\Extension;
use Ferry\MsgPack\Packer;
use Ferry\MsgPack\Type\Map;

/**
 * Tarantool MP_ERROR (ext 3): a map whose key 0x00 holds the stack, an array of maps
 * {0x00 type, 0x01 file, 0x02 line, 0x03 message, 0x04 errno, 0x05 code, 0x06 fields}.
 * Unknown keys are ignored (newer servers may add some); known keys must have the right type.
 */
final class ErrorStackExtension implements Extension
{
    private const STACK = 0x00;
    private const TYPE = 0x00;
    private const FILE = 0x01;
    private const LINE = 0x02;
    private const MESSAGE = 0x03;
    private const ERRNO = 0x04;
    private const CODE = 0x05;
    private const FIELDS = 0x06;

    public function getType(): int
    {
        return 3;
    }

    public function getClass(): ?string
    {
        return ErrorStack::class;
    }

    public function pack(Packer $packer, object $value): string
    {
        \assert($value instanceof ErrorStack);
        $stack = '';
        foreach ($value->errors as $e) {
            $stack .= $packer->packMapHeader(7)
                . "\x00" . $packer->packStr($e->type)
                . "\x01" . $packer->packStr($e->file)
                . "\x02" . $packer->packInt($e->line)
                . "\x03" . $packer->packStr($e->message)
                . "\x04" . $packer->packInt($e->errno)
                . "\x05" . $packer->packInt($e->code)
                . "\x06" . $packer->pack(new Map($e->fields));
        }
        return "\x81\x00" . $packer->packArrayHeader(\count($value->errors)) . $stack;
    }

    public function unpack(BufferUnpacker $unpacker, int $length): ErrorStack
    {
        $root = $unpacker->unpackValue();
        if (!\is_array($root) || !isset($root[self::STACK]) || !\is_array($root[self::STACK])) {
            throw $unpacker->fail('error extension payload is not a map with a stack array at key 0');
        }
        $errors = [];
        foreach ($root[self::STACK] as $i => $e) {
            if (!\is_array($e)) {
                throw $unpacker->fail("error stack entry $i is not a map");
            }
            $errors[] = new BoxError(
                $this->str($unpacker, $e, self::TYPE, $i),
                $this->str($unpacker, $e, self::MESSAGE, $i),
                $this->int($unpacker, $e, self::CODE, $i),
                $this->str($unpacker, $e, self::FILE, $i),
                $this->int($unpacker, $e, self::LINE, $i),
                $this->int($unpacker, $e, self::ERRNO, $i),
                $this->fields($unpacker, $e, $i),
            );
        }
        if ($errors === []) {
            throw $unpacker->fail('error stack is empty');
        }
        return new ErrorStack(...$errors);
    }

    /** @param array<mixed> $e */
    private function str(BufferUnpacker $u, array $e, int $key, int $i): string
    {
        $v = $e[$key] ?? '';
        if (!\is_string($v)) {
            throw $u->fail("error stack entry $i: key $key must be a string");
        }
        return $v;
    }

    /** @param array<mixed> $e */
    private function int(BufferUnpacker $u, array $e, int $key, int $i): int
    {
        $v = $e[$key] ?? 0;
        if (!\is_int($v)) {
            throw $u->fail("error stack entry $i: key $key must be an integer");
        }
        return $v;
    }

    /**
     * @param array<mixed> $e
     * @return array<int|string, mixed>
     */
    private function fields(BufferUnpacker $u, array $e, int $i): array
    {
        $v = $e[self::FIELDS] ?? [];
        if (!\is_array($v)) {
            throw $u->fail("error stack entry $i: fields must be a map");
        }
        return $v;
    }
}
