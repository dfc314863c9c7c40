<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

/** SELECT iterators (box.index.EQ etc.). Client::select() also takes their names as strings. */
final class IteratorType
{
    public const EQ = 0;
    public const REQ = 1;
    public const ALL = 2;
    public const LT = 3;
    public const LE = 4;
    public const GE = 5;
    public const GT = 6;
    public const BITS_ALL_SET = 7;
    public const BITS_ANY_SET = 8;
    public const BITS_ALL_NOT_SET = 9;
    public const OVERLAPS = 10;
    public const NEIGHBOR = 11;

    private const BY_NAME = [
        'EQ' => 0, 'REQ' => 1, 'ALL' => 2, 'LT' => 3, 'LE' => 4, 'GE' => 5, 'GT' => 6,
        'BITS_ALL_SET' => 7, 'BITS_ANY_SET' => 8, 'BITS_ALL_NOT_SET' => 9, 'OVERLAPS' => 10, 'NEIGHBOR' => 11,
    ];

    public static function of(int|string $iterator): int
    {
        if (\is_int($iterator)) {
            if ($iterator < 0 || $iterator > 11) {
                throw new \InvalidArgumentException(\sprintf('Unknown iterator type %d (valid: 0..11)', $iterator));
            }
            return $iterator;
        }
        return self::BY_NAME[\strtoupper($iterator)]
            ?? throw new \InvalidArgumentException(\sprintf('Unknown iterator "%s" (valid: %s)', $iterator, \implode(', ', \array_keys(self::BY_NAME))));
    }
}
