<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * An exact decimal number: (-1)^negative * digits * 10^-scale, as Tarantool's decimal type
 * (up to 38 significant digits). Trailing zeros are kept ("1.10" stays "1.10"), use
 * equals() for numeric comparison. Zero is never negative.
 */
final class Decimal implements \Stringable
{
    public const MAX_DIGITS = 38;
    /** Bounds the length of the string form; far beyond anything Tarantool produces. */
    public const MAX_SCALE = 1000;

    private function __construct(
        public readonly bool $negative,
        /** Coefficient digits without leading zeros ("0" for zero). */
        public readonly string $digits,
        public readonly int $scale,
    ) {
    }

    /** @param string $digits decimal digits of the coefficient (leading zeros allowed) */
    public static function of(string $digits, int $scale = 0, bool $negative = false): self
    {
        if ($digits === '' || \strspn($digits, '0123456789') !== \strlen($digits)) {
            throw new \InvalidArgumentException('decimal coefficient must be a non-empty string of digits');
        }
        $digits = \ltrim($digits, '0');
        if ($digits === '') {
            $digits = '0';
            $negative = false;
        }
        if (\strlen($digits) > self::MAX_DIGITS) {
            throw new \InvalidArgumentException('decimal has ' . \strlen($digits) . ' digits, more than ' . self::MAX_DIGITS);
        }
        if ($scale > self::MAX_SCALE || $scale < -self::MAX_SCALE) {
            throw new \InvalidArgumentException("decimal scale $scale outside ±" . self::MAX_SCALE);
        }
        return new self($negative, $digits, $scale);
    }

    /** Accepts "123", "-1.50", "+.5", "1e-3", "2.5E+10". */
    public static function fromString(string $s): self
    {
        if (!\preg_match('/^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,6}))?$/D', $s, $m) || ($m[2] === '' && ($m[3] ?? '') === '')) {
            throw new \InvalidArgumentException("invalid decimal string \"$s\"");
        }
        $frac = $m[3] ?? '';
        $exp = isset($m[4]) && $m[4] !== '' ? (int) $m[4] : 0;
        return self::of($m[2] . $frac, \strlen($frac) - $exp, $m[1] === '-');
    }

    public static function fromInt(int $v): self
    {
        return $v === PHP_INT_MIN
            ? self::of(\substr((string) $v, 1), 0, true)
            : self::of((string) \abs($v), 0, $v < 0);
    }

    public function isZero(): bool
    {
        return $this->digits === '0';
    }

    /** Same value with trailing zeros of the coefficient removed (scale lowered accordingly). */
    public function normalize(): self
    {
        if ($this->digits === '0') {
            return new self(false, '0', 0);
        }
        $trimmed = \rtrim($this->digits, '0');
        return new self($this->negative, $trimmed, $this->scale - (\strlen($this->digits) - \strlen($trimmed)));
    }

    /** Numeric equality: 1.10 equals 1.1. */
    public function equals(self $other): bool
    {
        $a = $this->normalize();
        $b = $other->normalize();
        return $a->negative === $b->negative && $a->digits === $b->digits && $a->scale === $b->scale;
    }

    /** Lossy conversion. */
    public function toFloat(): float
    {
        return (float) $this->__toString();
    }

    /** Plain notation, never exponent: "-12.34", "0.0010", "1200" (for digits 12, scale -2). */
    public function __toString(): string
    {
        $sign = $this->negative ? '-' : '';
        if ($this->scale <= 0) {
            return $sign . $this->digits . ($this->digits === '0' ? '' : \str_repeat('0', -$this->scale));
        }
        $d = \str_pad($this->digits, $this->scale + 1, '0', STR_PAD_LEFT);
        return $sign . \substr($d, 0, -$this->scale) . '.' . \substr($d, -$this->scale);
    }
}
