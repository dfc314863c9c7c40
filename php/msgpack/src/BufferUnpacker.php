<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

/**
 * Streaming MessagePack decoder. Bytes are appended as they arrive; the unpacker keeps an
 * offset into its buffer and only drops consumed bytes when they outweigh the rest, so a
 * long-lived connection costs amortised O(1) per byte.
 *
 * Every length and element count is checked against the bytes actually present before
 * anything is allocated, so hostile input fails in time proportional to its size.
 * A value cut short raises InsufficientData and leaves the unpacker where the value began.
 */
final class BufferUnpacker extends Decoder
{
    private const COMPACT_AFTER = 65536;
    /** ext/ferry's decoder recurses on the C stack; deeper limits stay in PHP. */
    private const NATIVE_MAX_DEPTH = 1024;

    /** ext/ferry's decoder gives ext payloads back to ext() through this; null: pure PHP. */
    private ?\Closure $native = null;
    private int $nativeFlags = 0;

    public function __construct(
        string $data = '',
        int $options = 0,
        ?Extensions $extensions = null,
        int $maxDepth = 512,
    ) {
        if ($maxDepth < 1) {
            throw new \InvalidArgumentException('maxDepth must be at least 1');
        }
        $this->maxDepth = $maxDepth;
        if (self::$byte === []) {
            self::$byte = \array_flip(\array_map('chr', \range(0, 255)));
        }
        Options::exclusive($options, Options::BIGINT_AS_STR, Options::BIGINT_AS_GMP, Options::BIGINT_AS_FLOAT);
        if (($options & Options::BIGINT_AS_GMP) && !\extension_loaded('gmp')) {
            throw new \InvalidArgumentException('Options::BIGINT_AS_GMP needs ext-gmp');
        }
        $this->bigint = $options & Options::BIGINT_AS_GMP ? 1 : ($options & Options::BIGINT_AS_FLOAT ? 2 : 0);
        $this->binObject = ($options & Options::BIN_AS_OBJECT) !== 0;
        $this->ext = ($extensions ?? Extensions::standard())->byType();
        $this->buf = $data;
        $this->len = \strlen($data);
        if ($maxDepth <= self::NATIVE_MAX_DEPTH && Native::available()) {
            $this->nativeFlags = $this->bigint | ($this->binObject ? 4 : 0);
            $this->native = $this->nativeExt(...);
        }
    }

    public function append(string $data): void
    {
        if ($this->off === $this->len) {
            $this->base += $this->off;
            $this->buf = $data;
            $this->off = 0;
            $this->len = \strlen($data);
            return;
        }
        if ($this->off > self::COMPACT_AFTER && $this->off * 2 > $this->len) {
            $this->base += $this->off;
            $this->buf = \substr($this->buf, $this->off) . $data;
            $this->off = 0;
            $this->len = \strlen($this->buf);
            return;
        }
        $this->buf .= $data;
        $this->len += \strlen($data);
    }

    /** Replaces the buffer; offsets in later errors restart from 0. */
    public function reset(string $data = ''): void
    {
        $this->buf = $data;
        $this->off = 0;
        $this->len = \strlen($data);
        $this->base = 0;
        $this->need = 0;
        $this->depth = 0;
    }

    /**
     * Decodes the next value. On any MsgPackException the unpacker is left at the start of
     * that value; after InsufficientData, append() more bytes and call again.
     */
    public function unpack(): mixed
    {
        $start = $this->off;
        $this->depth = 0;
        if ($this->native !== null) {
            $off = $start;
            try {
                $v = \Ferry\Ext\msgpack_unpack($this->buf, $off, $this->len, $this->base, $this->nativeFlags, $this->maxDepth, $this->ext, $this->native);
            } catch (MsgPackException $e) {
                $this->off = $start;
                // The C decoder reports what is missing; short() would have recorded the same need.
                $this->need = $e instanceof InsufficientData ? $this->base + $this->len + $e->getMissing() : 0;
                throw $e;
            }
            $this->off = $off;
            $this->need = 0;
            return $v;
        }
        try {
            // parse() inlined: one call less per message matters for small messages.
            if ($start >= $this->len) {
                throw $this->short($start, 1, 'value');
            }
            $c = self::$byte[$this->buf[$start]];
            if ($c >= 0x80 && $c <= 0x9f) {
                $this->off = $start + 1;
                $v = ($c & 0x0f) === 0 ? [] : $this->items($c & 0x0f, $c < 0x90, $start, 1);
            } else {
                $v = $this->items(1, false, -1, 0)[0];
            }
        } catch (MsgPackException $e) {
            $this->off = $start;
            if (!$e instanceof InsufficientData) {
                $this->need = 0;
            }
            throw $e;
        }
        $this->need = 0;
        return $v;
    }

    /**
     * Replaces the buffer with $data and decodes the one value it must hold: truncated data
     * raises InsufficientData, bytes after the value MsgPackException (the buffer is then
     * emptied). What Codec::unpack() does, in one call.
     */
    public function unpackMessage(string $data): mixed
    {
        if ($this->native !== null) {
            // all of the below, in C: on small messages this method cost as much as the decoding
            return \Ferry\Ext\msgpack_unpack_message($this, $data);
        }
        $this->buf = $data;
        $this->len = \strlen($data);
        $this->base = $this->depth = 0;
        $this->off = $this->need = 0;
        $v = $this->unpack();
        if ($this->off === $this->len) {
            return $v;
        }
        $n = $this->len - $this->off;
        $at = $this->off;
        $this->reset();
        throw new MsgPackException("$n trailing bytes after the value", $at);
    }

    /** @return list<mixed> every complete value in the buffer (possibly none); stops before a partial one. */
    public function tryUnpack(): array
    {
        $out = [];
        while ($this->off < $this->len) {
            try {
                $out[] = $this->unpack();
            } catch (InsufficientData) {
                break;
            }
        }
        if ($this->off === $this->len && $this->off > 0) {
            $this->base += $this->off;
            $this->buf = '';
            $this->off = $this->len = 0;
        }
        return $out;
    }

    /** Lower bound of bytes to append before the next value can complete (>= 1 when nothing is buffered). */
    public function missing(): int
    {
        $have = $this->base + $this->len;
        if ($this->need > $have) {
            return $this->need - $have;
        }
        return $this->off < $this->len ? 0 : 1;
    }

    public function hasRemaining(): bool
    {
        return $this->off < $this->len;
    }

    public function remaining(): int
    {
        return $this->len - $this->off;
    }

    /** Stream offset of the next byte to decode. */
    public function position(): int
    {
        return $this->base + $this->off;
    }

    public function unpackArrayHeader(): int
    {
        $o = $this->off;
        $c = $this->typeByte($o);
        if ($c >= 0x90 && $c <= 0x9f) {
            $this->off = $o + 1;
            return $c & 0x0f;
        }
        if ($c === 0xdc || $c === 0xdd) {
            return $this->length($o, $c === 0xdc ? 2 : 4);
        }
        throw $this->unexpected($o, $c, 'array');
    }

    public function unpackMapHeader(): int
    {
        $o = $this->off;
        $c = $this->typeByte($o);
        if ($c >= 0x80 && $c <= 0x8f) {
            $this->off = $o + 1;
            return $c & 0x0f;
        }
        if ($c === 0xde || $c === 0xdf) {
            return $this->length($o, $c === 0xde ? 2 : 4);
        }
        throw $this->unexpected($o, $c, 'map');
    }

    /** Any integer encoding; a uint64 above PHP_INT_MAX raises MsgPackException. */
    public function unpackInt(): int
    {
        $o = $this->off;
        $c = $this->typeByte($o);
        if ($c < 0x80) {
            $this->off = $o + 1;
            return $c;
        }
        if ($c >= 0xe0) {
            $this->off = $o + 1;
            return $c - 0x100;
        }
        if (($c >= 0xcc && $c <= 0xcf) || ($c >= 0xd0 && $c <= 0xd3)) {
            $v = $this->parse();
            if (!\is_int($v)) {
                $this->off = $o;
                throw new MsgPackException('uint64 value ' . $v . ' does not fit in a PHP int', $this->base + $o);
            }
            return $v;
        }
        throw $this->unexpected($o, $c, 'int');
    }

    /** A str or bin value as a PHP string. */
    public function unpackStr(): string
    {
        $o = $this->off;
        $c = $this->typeByte($o);
        if ($c >= 0xa0 && $c <= 0xbf) {
            return $this->take($o, 1, $c & 0x1f, 'fixstr');
        }
        return match ($c) {
            0xd9, 0xc4 => $this->take($o, 2, $this->header($o, 1), 'str8/bin8'),
            0xda, 0xc5 => $this->take($o, 3, $this->header($o, 2), 'str16/bin16'),
            0xdb, 0xc6 => $this->take($o, 5, $this->header($o, 4), 'str32/bin32'),
            default => throw $this->unexpected($o, $c, 'str'),
        };
    }

    /**
     * For Extension implementations: decodes one nested value, sharing this unpacker's
     * depth limit and offsets (unlike unpack(), it does not rewind on failure).
     */
    public function unpackValue(): mixed
    {
        return $this->parse();
    }

    /** For Extension implementations: the next $n raw bytes. */
    public function readBytes(int $n): string
    {
        if ($n < 0) {
            throw $this->fail("negative length $n");
        }
        return $this->take($this->off, 0, $n, 'raw bytes');
    }

    /** For Extension implementations: an exception pointing at the current offset. */
    public function fail(string $reason): MsgPackException
    {
        return new MsgPackException($reason, $this->base + $this->off);
    }

    /**
     * @internal Whether unpackMessage() runs on ext/ferry's C codec, so a codec may call
     * \Ferry\Ext\msgpack_unpack_message($this, $data) itself and save the method call.
     */
    public function isNative(): bool
    {
        return $this->native !== null;
    }

    /** The C decoder's callback for an ext value with a registered extension (see Decoder::ext()). */
    private function nativeExt(int $o, int $h, int $n, int $depth): mixed
    {
        $saved = $this->depth;
        $this->depth = $depth;
        $v = $this->ext($o, $h, $n);
        $this->depth = $saved;
        return $v;
    }

    /** A container length: consumes the type byte and its $size-byte header. */
    private function length(int $o, int $size): int
    {
        $n = $this->header($o, $size);
        $this->off = $o + 1 + $size;
        return $n;
    }

    private function typeByte(int $o): int
    {
        if ($o >= $this->len) {
            throw $this->short($o, 1, 'value');
        }
        return \ord($this->buf[$o]);
    }

    private function unexpected(int $o, int $c, string $want): MsgPackException
    {
        return new MsgPackException(\sprintf('expected %s, got type byte 0x%02x', $want, $c), $this->base + $o);
    }
}
