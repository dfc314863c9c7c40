<?php

declare(strict_types=1);

namespace Ferry\MsgPack\Ext;

/**
 * Tarantool's MP_ERROR value: a non-empty stack of errors in wire order, i.e. the error
 * itself first, then its causes (box.error's prev chain).
 *
 * @implements \IteratorAggregate<int, BoxError>
 */
final class ErrorStack implements \IteratorAggregate, \Countable, \Stringable
{
    /** @var list<BoxError> */
    public readonly array $errors;

    public function __construct(BoxError ...$errors)
    {
        if ($errors === []) {
            throw new \InvalidArgumentException('an error stack holds at least one error');
        }
        $this->errors = \array_values($errors);
    }

    public function first(): BoxError
    {
        return $this->errors[0];
    }

    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->errors);
    }

    public function count(): int
    {
        return \count($this->errors);
    }

    /** "Type: message (code N)", causes appended after " <- ". */
    public function __toString(): string
    {
        $parts = [];
        foreach ($this->errors as $e) {
            $parts[] = "{$e->type}: {$e->message} (code {$e->code})";
        }
        return \implode(' <- ', $parts);
    }
}
