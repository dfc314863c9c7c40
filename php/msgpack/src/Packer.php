<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Type\Arr;
use Ferry\MsgPack\Type\Bin;
use Ferry\MsgPack\Type\Map;
use Ferry\MsgPack\Type\Str;

/**
 * Encodes PHP values as MessagePack. Integers use the smallest encoding, floats float64
 * (or float32 with Options::FORCE_FLOAT32), strings str (see Options for bin), lists arrays
 * and other arrays maps. Objects are packed by a registered Extension, or are one of
 * Type\Bin/Str/Map/Arr, Ext\RawExt or \GMP (must fit int64/uint64).
 *
 * Scalars inside arrays are encoded inline rather than through a method call per value,
 * because the call dominates the cost of packing small Tarantool requests.
 */
final class Packer
{
    private const MAX_DEPTH = 512;

    private int $strMode; // 0 = str, 1 = bin, 2 = detect
    private int $arrMode; // 0 = detect, 1 = force array, 2 = force map
    private bool $float32;
    /** @var array<string, Extension> */
    private array $byClass;
    private Extensions $extensions;
    private int $depth = 0;
    /** ext/ferry's packer hands objects and resources back through this; null: pure PHP. */
    private ?\Closure $native = null;
    private int $nativeFlags = 0;

    public function __construct(int $options = 0, ?Extensions $extensions = null)
    {
        Options::exclusive($options, Options::FORCE_STR, Options::FORCE_BIN, Options::DETECT_STR_BIN);
        Options::exclusive($options, Options::DETECT_ARR_MAP, Options::FORCE_ARR, Options::FORCE_MAP);
        Options::exclusive($options, Options::FORCE_FLOAT64, Options::FORCE_FLOAT32);
        $this->strMode = $options & Options::FORCE_BIN ? 1 : ($options & Options::DETECT_STR_BIN ? 2 : 0);
        $this->arrMode = $options & Options::FORCE_ARR ? 1 : ($options & Options::FORCE_MAP ? 2 : 0);
        $this->float32 = ($options & Options::FORCE_FLOAT32) !== 0;
        $this->extensions = $extensions ?? Extensions::standard();
        $this->byClass = $this->extensions->byClass();
        // DETECT_STR_BIN stays in PHP: its UTF-8 check is PCRE's, which C would have to match exactly.
        if ($this->strMode !== 2 && Native::available()) {
            $this->nativeFlags = ($this->strMode === 1 ? 0x01 : 0)
                | ($this->arrMode === 1 ? 0x04 : ($this->arrMode === 2 ? 0x08 : 0))
                | ($this->float32 ? 0x10 : 0);
            $this->native = $this->packOther(...);
        }
    }

    public function pack(mixed $v): string
    {
        if ($this->native !== null) {
            return \Ferry\Ext\msgpack_pack($v, $this->nativeFlags, $this->depth, $this->native, $this->byClass);
        }
        if (\is_int($v)) {
            return $this->packInt($v);
        }
        if (\is_string($v)) {
            return $this->strMode === 0 ? $this->packStr($v) : $this->packString($v);
        }
        if (\is_array($v)) {
            if ($this->arrMode === 2 || ($this->arrMode === 0 && !\array_is_list($v))) {
                return $this->packMap($v);
            }
            return $this->packArray($v);
        }
        if ($v === null) {
            return "\xc0";
        }
        if (\is_bool($v)) {
            return $v ? "\xc3" : "\xc2";
        }
        if (\is_float($v)) {
            return $this->float32 ? "\xca" . \pack('G', $v) : "\xcb" . \pack('E', $v);
        }
        if (\is_object($v)) {
            return $this->packObject($v);
        }
        throw $this->fail('cannot pack a value of type ' . \get_debug_type($v));
    }

    /**
     * @internal For codecs that pack whole values at the top level: the arguments after the
     * value for \Ferry\Ext\msgpack_pack() [flags, depth 0, callback, class map], or null when
     * this packer runs pure PHP. Calling msgpack_pack($v, ...$args) is pack($v) minus one call.
     * @return array{int, int, \Closure, array<string, Extension>}|null
     */
    public function nativeArgs(): ?array
    {
        return $this->native === null ? null : [$this->nativeFlags, 0, $this->native, $this->byClass];
    }

    public function packNil(): string
    {
        return "\xc0";
    }

    public function packBool(bool $v): string
    {
        return $v ? "\xc3" : "\xc2";
    }

    public function packInt(int $v): string
    {
        if ($v >= 0) {
            if ($v < 0x80) {
                return \chr($v);
            }
            if ($v <= 0xff) {
                return "\xcc" . \chr($v);
            }
            if ($v <= 0xffff) {
                return "\xcd" . \chr($v >> 8) . \chr($v);
            }
            return $v <= 0xffffffff ? "\xce" . \pack('N', $v) : "\xcf" . \pack('J', $v);
        }
        if ($v >= -0x20) {
            return \chr($v & 0xff);
        }
        if ($v >= -0x80) {
            return "\xd0" . \chr($v & 0xff);
        }
        if ($v >= -0x8000) {
            return "\xd1" . \chr(($v >> 8) & 0xff) . \chr($v & 0xff);
        }
        return $v >= -0x80000000 ? "\xd2" . \pack('N', $v) : "\xd3" . \pack('J', $v);
    }

    public function packFloat(float $v): string
    {
        return $this->float32 ? "\xca" . \pack('G', $v) : "\xcb" . \pack('E', $v);
    }

    public function packFloat32(float $v): string
    {
        return "\xca" . \pack('G', $v);
    }

    public function packFloat64(float $v): string
    {
        return "\xcb" . \pack('E', $v);
    }

    /** Always str, whatever the options. */
    public function packStr(string $v): string
    {
        $n = \strlen($v);
        if ($n < 32) {
            return \chr(0xa0 | $n) . $v;
        }
        if ($n <= 0xff) {
            return "\xd9" . \chr($n) . $v;
        }
        if ($n <= 0xffff) {
            return "\xda" . \chr($n >> 8) . \chr($n & 0xff) . $v;
        }
        return "\xdb" . $this->len32($n) . $v;
    }

    /** Always bin, whatever the options. */
    public function packBin(string $v): string
    {
        $n = \strlen($v);
        if ($n <= 0xff) {
            return "\xc4" . \chr($n) . $v;
        }
        if ($n <= 0xffff) {
            return "\xc5" . \chr($n >> 8) . \chr($n & 0xff) . $v;
        }
        return "\xc6" . $this->len32($n) . $v;
    }

    public function packArrayHeader(int $n): string
    {
        if ($n < 16 && $n >= 0) {
            return \chr(0x90 | $n);
        }
        if ($n < 0) {
            throw $this->fail("array header for a negative count $n");
        }
        return $n <= 0xffff ? "\xdc" . \chr($n >> 8) . \chr($n & 0xff) : "\xdd" . $this->len32($n);
    }

    public function packMapHeader(int $n): string
    {
        if ($n < 16 && $n >= 0) {
            return \chr(0x80 | $n);
        }
        if ($n < 0) {
            throw $this->fail("map header for a negative count $n");
        }
        return $n <= 0xffff ? "\xde" . \chr($n >> 8) . \chr($n & 0xff) : "\xdf" . $this->len32($n);
    }

    public function packExt(int $type, string $data): string
    {
        if ($type < -128 || $type > 127) {
            throw $this->fail("ext type code $type is outside -128..127");
        }
        $t = \chr($type & 0xff);
        $n = \strlen($data);
        switch ($n) {
            case 1: return "\xd4" . $t . $data;
            case 2: return "\xd5" . $t . $data;
            case 4: return "\xd6" . $t . $data;
            case 8: return "\xd7" . $t . $data;
            case 16: return "\xd8" . $t . $data;
        }
        if ($n <= 0xff) {
            return "\xc7" . \chr($n) . $t . $data;
        }
        if ($n <= 0xffff) {
            return "\xc8" . \chr($n >> 8) . \chr($n & 0xff) . $t . $data;
        }
        return "\xc9" . $this->len32($n) . $t . $data;
    }

    /** @param array<mixed> $list packed in order; keys are ignored */
    public function packArray(array $list): string
    {
        if ($this->native !== null) {
            return \Ferry\Ext\msgpack_pack($list, $this->nativeFlags | 0x20, $this->depth, $this->native, $this->byClass);
        }
        if (++$this->depth > self::MAX_DEPTH) {
            throw $this->fail('nesting deeper than ' . self::MAX_DEPTH . ' levels (recursive array?)');
        }
        $n = \count($list);
        $out = $n < 16 ? \chr(0x90 | $n) : $this->packArrayHeader($n);
        $plainStr = $this->strMode === 0;
        foreach ($list as $v) {
            if (\is_int($v)) {
                $out .= $v >= 0 && $v < 0x80 ? \chr($v) : $this->packInt($v);
            } elseif (\is_string($v) && $plainStr && \strlen($v) < 32) {
                $out .= \chr(0xa0 | \strlen($v)) . $v;
            } elseif (\is_array($v) && $this->arrMode === 0) {
                $out .= \array_is_list($v) ? $this->packArray($v) : $this->packMap($v);
            } else {
                $out .= $this->pack($v);
            }
        }
        --$this->depth;
        return $out;
    }

    /** @param array<int|string, mixed> $map */
    public function packMap(array $map): string
    {
        if ($this->native !== null) {
            return \Ferry\Ext\msgpack_pack($map, $this->nativeFlags | 0x40, $this->depth, $this->native, $this->byClass);
        }
        if (++$this->depth > self::MAX_DEPTH) {
            throw $this->fail('nesting deeper than ' . self::MAX_DEPTH . ' levels (recursive array?)');
        }
        $n = \count($map);
        $out = $n < 16 ? \chr(0x80 | $n) : $this->packMapHeader($n);
        $plainStr = $this->strMode === 0;
        foreach ($map as $k => $v) {
            if (\is_int($k)) {
                $out .= $k >= 0 && $k < 0x80 ? \chr($k) : $this->packInt($k);
            } elseif ($plainStr && \strlen($k) < 32) {
                $out .= \chr(0xa0 | \strlen($k)) . $k;
            } else {
                $out .= $this->packString($k);
            }
            if (\is_int($v)) {
                $out .= $v >= 0 && $v < 0x80 ? \chr($v) : $this->packInt($v);
            } elseif (\is_string($v) && $plainStr && \strlen($v) < 32) {
                $out .= \chr(0xa0 | \strlen($v)) . $v;
            } elseif (\is_array($v) && $this->arrMode === 0) {
                $out .= \array_is_list($v) ? $this->packArray($v) : $this->packMap($v);
            } else {
                $out .= $this->pack($v);
            }
        }
        --$this->depth;
        return $out;
    }

    /** A PHP string according to the string options. */
    public function packString(string $v): string
    {
        if ($this->strMode === 0 || ($this->strMode === 2 && \preg_match('//u', $v) === 1)) {
            return $this->packStr($v);
        }
        return $this->packBin($v);
    }

    /** The C packer's callback for what it leaves to PHP, found $depth containers deep. */
    private function packOther(mixed $v, int $depth): string
    {
        if (!\is_object($v)) {
            throw $this->fail('cannot pack a value of type ' . \get_debug_type($v));
        }
        $saved = $this->depth;
        $this->depth = $depth;
        $out = $this->packObject($v);
        $this->depth = $saved;
        return $out;
    }

    private function packObject(object $v): string
    {
        $ext = $this->byClass[$v::class] ?? null;
        if ($ext !== null) {
            return $this->packWith($ext, $v);
        }
        if ($v instanceof Bin) {
            return $this->packBin($v->data);
        }
        if ($v instanceof Str) {
            return $this->packStr($v->data);
        }
        if ($v instanceof Map) {
            return $this->packMap($v->map);
        }
        if ($v instanceof Arr) {
            return $this->packArray($v->list);
        }
        if ($v instanceof RawExt) {
            return $this->packExt($v->type, $v->data);
        }
        if ($v instanceof \GMP) {
            return $this->packGmp($v);
        }
        $ext = $this->extensions->forClass($v::class);
        if ($ext !== null) {
            return $this->packWith($ext, $v);
        }
        throw $this->fail('cannot pack an object of class ' . $v::class . ' (no extension registered)');
    }

    private function packGmp(\GMP $v): string
    {
        if (\gmp_cmp($v, PHP_INT_MIN) >= 0 && \gmp_cmp($v, PHP_INT_MAX) <= 0) {
            return $this->packInt(\gmp_intval($v));
        }
        if (\gmp_sign($v) > 0 && \gmp_cmp($v, '18446744073709551615') <= 0) {
            return "\xcf" . \str_pad(\gmp_export($v), 8, "\0", STR_PAD_LEFT);
        }
        throw $this->fail('GMP value ' . \gmp_strval($v) . ' does not fit in int64/uint64');
    }

    private function packWith(Extension $ext, object $v): string
    {
        try {
            return $this->packExt($ext->getType(), $ext->pack($this, $v));
        } catch (\Throwable $e) {
            $this->depth = 0;
            throw $e;
        }
    }

    /** Resets the depth counter, which the aborted recursion will not unwind. */
    private function fail(string $reason): MsgPackException
    {
        $this->depth = 0;
        return new MsgPackException($reason);
    }

    private function len32(int $n): string
    {
        if ($n > 0xffffffff || $n < 0) {
            throw $this->fail("length $n does not fit in 32 bits");
        }
        return \pack('N', $n);
    }
}
