<?php

declare(strict_types=1);

namespace Ferry\Tarantool;

/**
 * UPDATE / UPSERT operation list. Fields are given by name or by 1-based number as in Lua
 * (negative numbers count from the end: -1 is the last field); the connector sends
 * IPROTO_INDEX_BASE = 1 with them. Splice offsets are 1-based too.
 *
 *   Operations::new()->add('count', 1)->set(3, 'x')->splice('name', 1, 2, 'ab')
 */
final class Operations
{
    /** @var list<list<mixed>> */
    private array $ops = [];

    public static function new(): self
    {
        return new self();
    }

    /**
     * Accepts an Operations or a raw list like [['+', 'count', 1], ['=', 2, 'x']].
     * @param self|list<list<mixed>> $ops
     */
    public static function from(self|array $ops): self
    {
        if ($ops instanceof self) {
            return $ops;
        }
        $o = new self();
        foreach ($ops as $i => $op) {
            if (!\is_array($op) || !\array_is_list($op) || \count($op) < 2 || !\is_string($op[0])) {
                throw new \InvalidArgumentException(\sprintf('Operation #%d must be a list [operator, field, ...]', $i));
            }
            $o->push($op[0], $op[1], \array_slice($op, 2));
        }
        return $o;
    }

    public function set(int|string $field, mixed $value): self
    {
        return $this->push('=', $field, [$value]);
    }

    public function add(int|string $field, int|float $value): self
    {
        return $this->push('+', $field, [$value]);
    }

    public function subtract(int|string $field, int|float $value): self
    {
        return $this->push('-', $field, [$value]);
    }

    public function bitAnd(int|string $field, int $value): self
    {
        return $this->push('&', $field, [$value]);
    }

    public function bitOr(int|string $field, int $value): self
    {
        return $this->push('|', $field, [$value]);
    }

    public function bitXor(int|string $field, int $value): self
    {
        return $this->push('^', $field, [$value]);
    }

    /** Removes $count fields starting at $field. */
    public function delete(int|string $field, int $count = 1): self
    {
        return $this->push('#', $field, [$count]);
    }

    /** Inserts $value before $field (shifting it right). */
    public function insert(int|string $field, mixed $value): self
    {
        return $this->push('!', $field, [$value]);
    }

    /** Replaces $length bytes of a string field starting at 1-based $offset with $replacement. */
    public function splice(int|string $field, int $offset, int $length, string $replacement): self
    {
        return $this->push(':', $field, [$offset, $length, $replacement]);
    }

    /** @return list<list<mixed>> */
    public function toArray(): array
    {
        return $this->ops;
    }

    public function isEmpty(): bool
    {
        return $this->ops === [];
    }

    /** @param list<mixed> $args */
    private function push(string $op, mixed $field, array $args): self
    {
        $arity = match ($op) {
            '=', '+', '-', '&', '|', '^', '#', '!' => 1,
            ':' => 3,
            default => throw new \InvalidArgumentException(\sprintf('Unknown update operator "%s" (valid: = + - & | ^ # ! :)', $op)),
        };
        if (!\is_int($field) && !\is_string($field)) {
            throw new \InvalidArgumentException(\sprintf('Operation "%s": field must be a name or a number, got %s', $op, \get_debug_type($field)));
        }
        if ($field === 0 || $field === '') {
            throw new \InvalidArgumentException(\sprintf('Operation "%s": fields are numbered from 1 (or -1 from the end)', $op));
        }
        if (\count($args) !== $arity) {
            throw new \InvalidArgumentException(\sprintf('Operation "%s" takes %d argument(s) after the field, got %d', $op, $arity, \count($args)));
        }
        $this->ops[] = [$op, $field, ...$args];
        return $this;
    }
}
