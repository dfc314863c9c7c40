<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

use Ferry\MsgPack\Ext\RawExt;
use Ferry\MsgPack\Type\Bin;

/**
 * @internal The decoding core behind BufferUnpacker.
 *
 * In pure PHP a method call costs more than decoding a small scalar, so there is no call
 * per value: items() decodes a whole container in one loop over type bytes, with the buffer
 * and offset in local variables, and recurses only for nested containers and ext values.
 * (An explicit stack instead of recursion was measured slower: PHP array push/pop per
 * container costs more than the call.) Every length and element count is checked against
 * the bytes present before anything is allocated.
 *
 * Over 400 lines on purpose: the one flat switch over type bytes is the hot path, and
 * splitting it into methods would put back the per-value call it exists to avoid.
 */
abstract class Decoder
{
    protected string $buf = '';
    protected int $off = 0;
    /** End of readable data; lowered to the payload end while an Extension decodes. */
    protected int $len = 0;
    /** Bytes dropped from the front by compaction, so error offsets are stream offsets. */
    protected int $base = 0;
    /** Stream offset up to which bytes are known to be needed after the last InsufficientData. */
    protected int $need = 0;
    /** Open containers around the value being parsed (non-zero inside extension payloads). */
    protected int $depth = 0;
    protected int $maxDepth = 512;
    /** 0 = decimal string, 1 = GMP, 2 = float */
    protected int $bigint = 0;
    protected bool $binObject = false;
    /** @var array<int, Extension> */
    protected array $ext = [];

    /** @var array<string, int> byte => ord(byte); an array lookup is cheaper than calling ord() */
    protected static array $byte = [];

    /** Decodes the value at $this->off and leaves $this->off after it. */
    protected function parse(): mixed
    {
        $o = $this->off;
        if ($o >= $this->len) {
            throw $this->short($o, 1, 'value');
        }
        $c = self::$byte[$this->buf[$o]];
        if ($c >= 0x80 && $c <= 0x9f) {
            $this->off = $o + 1;
            return ($c & 0x0f) === 0 ? [] : $this->items($c & 0x0f, $c < 0x90, $o, $this->depth + 1);
        }
        // Anything else: decode it as the only element of a virtual array.
        return $this->items(1, false, -1, $this->depth)[0];
    }

    /**
     * Decodes a container of $n elements (or $n map entries) starting at $this->off, its type
     * byte being at $at (-1: the virtual one-element array used by parse()) and $depth its
     * nesting level. Scalars are decoded inline; only nested containers and ext values cost
     * a call. The depth travels as an argument because a property update per container
     * is measurably slower.
     */
    protected function items(int $n, bool $isMap, int $at, int $depth): array
    {
        $count = $isMap ? $n * 2 : $n;
        if ($at >= 0) {
            // Every element takes at least one byte: reject impossible counts before looping.
            if ($count > $this->len - $this->off) {
                throw $this->short($this->off, $count, $isMap ? "map of $n entries" : "array of $n elements");
            }
            if ($depth > $this->maxDepth) {
                throw new MsgPackException("nesting deeper than {$this->maxDepth} levels", $this->base + $at);
            }
        }
        $buf = $this->buf;
        $len = $this->len;
        $o = $this->off;
        $B = self::$byte;
        $r = [];
        $key = null;
        for ($i = 0; $i < $count; ++$i) {
            if ($o >= $len) {
                throw $this->short($o, 1, 'value');
            }
            $at = $o;
            $c = $B[$buf[$o]];
            if ($c < 0x80) {
                $v = $c;
                ++$o;
            } elseif ($c >= 0xa0 && $c < 0xc0) {
                $n = $c & 0x1f;
                if ($o + 1 + $n > $len) {
                    throw $this->short($o, 1 + $n, 'fixstr');
                }
                $v = \substr($buf, $o + 1, $n);
                $o += 1 + $n;
            } elseif ($c >= 0xe0) {
                $v = $c - 0x100;
                ++$o;
            } elseif ($c < 0xa0) {
                $n = $c & 0x0f;
                ++$o;
                if ($n === 0) {
                    $v = [];
                } else {
                    if ($isMap && $key === null) {
                        throw $this->containerKey($c < 0x90, $at);
                    }
                    $v = null;
                    if ($c >= 0x90 && $depth < $this->maxDepth) {
                        // Small lists of fixint/fixstr/nil (most tuples) are decoded right here,
                        // saving a call; anything else abandons the attempt and takes the
                        // general path, which re-reads at most 15 elements.
                        $t = [];
                        $p = $o;
                        for ($j = 0; $j < $n && $p < $len; ++$j) {
                            $d = $B[$buf[$p]];
                            if ($d < 0x80) {
                                $t[] = $d;
                                ++$p;
                            } elseif ($d >= 0xa0 && $d < 0xc0 && $p + 1 + ($d & 0x1f) <= $len) {
                                $t[] = \substr($buf, $p + 1, $d & 0x1f);
                                $p += 1 + ($d & 0x1f);
                            } elseif ($d === 0xc0) {
                                $t[] = null;
                                ++$p;
                            } else {
                                break;
                            }
                        }
                        if ($j === $n) {
                            $v = $t;
                            $o = $p;
                        }
                    }
                    if ($v === null) {
                        $this->off = $o;
                        $v = $this->items($n, $c < 0x90, $at, $depth + 1);
                        $o = $this->off;
                    }
                }
            } else {
                switch ($c) {
                    case 0xc0:
                        $v = null;
                        ++$o;
                        break;
                    case 0xc2:
                        $v = false;
                        ++$o;
                        break;
                    case 0xc3:
                        $v = true;
                        ++$o;
                        break;
                    case 0xcc:
                        if ($o + 2 > $len) {
                            throw $this->short($o, 2, 'uint8');
                        }
                        $v = $B[$buf[$o + 1]];
                        $o += 2;
                        break;
                    case 0xcd:
                        if ($o + 3 > $len) {
                            throw $this->short($o, 3, 'uint16');
                        }
                        $v = ($B[$buf[$o + 1]] << 8) | $B[$buf[$o + 2]];
                        $o += 3;
                        break;
                    case 0xce:
                        if ($o + 5 > $len) {
                            throw $this->short($o, 5, 'uint32');
                        }
                        $v = \unpack('N', $buf, $o + 1)[1];
                        $o += 5;
                        break;
                    case 0xcf:
                        if ($o + 9 > $len) {
                            throw $this->short($o, 9, 'uint64');
                        }
                        $v = \unpack('J', $buf, $o + 1)[1];
                        if ($v < 0) {
                            // As a map key it is the decimal string in every BIGINT mode (a float
                            // key would be truncated by PHP, a GMP one is not a valid key).
                            $v = $isMap && $key === null ? \sprintf('%u', $v) : $this->bigint($v);
                        }
                        $o += 9;
                        break;
                    case 0xd0:
                        if ($o + 2 > $len) {
                            throw $this->short($o, 2, 'int8');
                        }
                        $v = $B[$buf[$o + 1]];
                        if ($v > 0x7f) {
                            $v -= 0x100;
                        }
                        $o += 2;
                        break;
                    case 0xd1:
                        if ($o + 3 > $len) {
                            throw $this->short($o, 3, 'int16');
                        }
                        $v = ($B[$buf[$o + 1]] << 8) | $B[$buf[$o + 2]];
                        if ($v > 0x7fff) {
                            $v -= 0x10000;
                        }
                        $o += 3;
                        break;
                    case 0xd2:
                        if ($o + 5 > $len) {
                            throw $this->short($o, 5, 'int32');
                        }
                        $v = \unpack('N', $buf, $o + 1)[1];
                        if ($v > 0x7fffffff) {
                            $v -= 0x100000000;
                        }
                        $o += 5;
                        break;
                    case 0xd3:
                        if ($o + 9 > $len) {
                            throw $this->short($o, 9, 'int64');
                        }
                        $v = \unpack('J', $buf, $o + 1)[1];
                        $o += 9;
                        break;
                    case 0xca:
                        if ($o + 5 > $len) {
                            throw $this->short($o, 5, 'float32');
                        }
                        $v = \unpack('G', $buf, $o + 1)[1];
                        $o += 5;
                        break;
                    case 0xcb:
                        if ($o + 9 > $len) {
                            throw $this->short($o, 9, 'float64');
                        }
                        $v = \unpack('E', $buf, $o + 1)[1];
                        $o += 9;
                        break;
                    case 0xd9:
                    case 0xc4:
                        if ($o + 2 > $len) {
                            throw $this->short($o, 2, 'length header');
                        }
                        $n = $B[$buf[$o + 1]];
                        if ($o + 2 + $n > $len) {
                            throw $this->short($o, 2 + $n, ($c === 0xd9 ? 'str8' : 'bin8') . " of $n bytes");
                        }
                        $v = \substr($buf, $o + 2, $n);
                        $o += 2 + $n;
                        if ($c === 0xc4 && $this->binObject) {
                            $v = new Bin($v);
                        }
                        break;
                    case 0xda:
                    case 0xdb:
                    case 0xc5:
                    case 0xc6:
                        $h = ($c === 0xda || $c === 0xc5) ? 2 : 4;
                        $n = $this->header($o, $h);
                        if ($o + 1 + $h + $n > $len) {
                            throw $this->short($o, 1 + $h + $n, ($c >= 0xd9 ? 'str' : 'bin') . ($h * 8) . " of $n bytes");
                        }
                        $v = \substr($buf, $o + 1 + $h, $n);
                        $o += 1 + $h + $n;
                        if ($c < 0xd9 && $this->binObject) {
                            $v = new Bin($v);
                        }
                        break;
                    case 0xdc:
                    case 0xdd:
                    case 0xde:
                    case 0xdf:
                        $h = ($c === 0xdc || $c === 0xde) ? 2 : 4;
                        $n = $this->header($o, $h);
                        $o += 1 + $h;
                        if ($n === 0) {
                            $v = [];
                            break;
                        }
                        if ($isMap && $key === null) {
                            throw $this->containerKey($c >= 0xde, $at);
                        }
                        $this->off = $o;
                        $v = $this->items($n, $c >= 0xde, $at, $depth + 1);
                        $o = $this->off;
                        break;
                    case 0xd4:
                    case 0xd5:
                    case 0xd6:
                    case 0xd7:
                    case 0xd8:
                        $saved = $this->depth;
                        $this->depth = $depth;
                        $v = $this->ext($o, 2, 1 << ($c - 0xd4));
                        $this->depth = $saved;
                        $o = $this->off;
                        break;
                    case 0xc7:
                    case 0xc8:
                    case 0xc9:
                        $h = $c === 0xc7 ? 1 : ($c === 0xc8 ? 2 : 4);
                        $n = $this->header($o, $h);
                        $saved = $this->depth;
                        $this->depth = $depth;
                        $v = $this->ext($o, 2 + $h, $n);
                        $this->depth = $saved;
                        $o = $this->off;
                        break;
                    default:
                        throw new MsgPackException('invalid type byte 0xc1 (never used)', $this->base + $o);
                }
            }
            if ($isMap) {
                if ($key === null) {
                    $key = \is_int($v) || \is_string($v) ? $v : $this->mapKey($v, $at);
                } else {
                    $r[$key] = $v;
                    $key = null;
                }
            } else {
                $r[] = $v;
            }
        }
        $this->off = $o;
        return $r;
    }

    private function containerKey(bool $isMap, int $at): MsgPackException
    {
        return new MsgPackException(
            'map key of type ' . ($isMap ? 'map' : 'array') . ' is not supported (only int, str and bin keys)',
            $this->base + $at,
        );
    }

    private function mapKey(mixed $k, int $at): int|string
    {
        if ($k instanceof Bin) {
            return $k->data;
        }
        if ($k instanceof \GMP) {
            return \gmp_strval($k);
        }
        throw new MsgPackException(
            'map key of type ' . \get_debug_type($k) . ' is not supported (only int, str and bin keys)',
            $this->base + $at,
        );
    }

    /**
     * The ext value at $o: $h header bytes (the last one is the type code), $n payload bytes.
     * Leaves $this->off after the payload.
     */
    protected function ext(int $o, int $h, int $n): mixed
    {
        $start = $o + $h;
        if ($start + $n > $this->len) {
            throw $this->short($o, $h + $n, "ext of $n bytes");
        }
        $type = \ord($this->buf[$start - 1]);
        if ($type > 127) {
            $type -= 256;
        }
        $e = $this->ext[$type] ?? null;
        if ($e === null) {
            $this->off = $start + $n;
            return new RawExt($type, \substr($this->buf, $start, $n));
        }
        $len = $this->len;
        $this->len = $start + $n;
        $this->off = $start;
        try {
            $v = $e->unpack($this, $n);
        } catch (InsufficientData $x) {
            throw new MsgPackException("ext type $type payload ends early: " . $x->getReason(), $x->getOffset(), $x);
        } catch (MsgPackException $x) {
            throw $x;
        } catch (\Throwable $x) {
            throw new MsgPackException("ext type $type payload is invalid: " . $x->getMessage(), $this->base + $o, $x);
        } finally {
            $this->len = $len;
        }
        if ($this->off !== $start + $n) {
            throw new MsgPackException("ext type $type payload has trailing bytes", $this->base + $o);
        }
        return $v;
    }

    /** Big-endian unsigned length of $size bytes following the type byte at $o. */
    protected function header(int $o, int $size): int
    {
        if ($o + 1 + $size > $this->len) {
            throw $this->short($o, 1 + $size, 'length header');
        }
        return match ($size) {
            1 => \ord($this->buf[$o + 1]),
            2 => (\ord($this->buf[$o + 1]) << 8) | \ord($this->buf[$o + 2]),
            default => \unpack('N', $this->buf, $o + 1)[1],
        };
    }

    /** $n payload bytes after a header of $h bytes at $o; checked before substr allocates. */
    protected function take(int $o, int $h, int $n, string $what): string
    {
        if ($o + $h + $n > $this->len) {
            throw $this->short($o, $h + $n, "$what of $n bytes");
        }
        $this->off = $o + $h + $n;
        return \substr($this->buf, $o + $h, $n);
    }

    private function bigint(int $v): string|float|\GMP
    {
        $s = \sprintf('%u', $v);
        return match ($this->bigint) {
            1 => \gmp_init($s),
            2 => (float) $s,
            default => $s,
        };
    }

    /** The value starting at $o needs $need bytes from $o but the buffer ends first. */
    protected function short(int $o, int $need, string $what): InsufficientData
    {
        $this->need = $this->base + $o + $need;
        $missing = $o + $need - $this->len;
        return new InsufficientData("truncated $what: $missing more bytes needed", $this->base + $o, $missing);
    }
}
