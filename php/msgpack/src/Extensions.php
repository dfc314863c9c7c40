<?php

declare(strict_types=1);

namespace Ferry\MsgPack;

use Ferry\MsgPack\Ext\DatetimeExtension;
use Ferry\MsgPack\Ext\DecimalExtension;
use Ferry\MsgPack\Ext\ErrorStackExtension;
use Ferry\MsgPack\Ext\IntervalExtension;
use Ferry\MsgPack\Ext\TimestampExtension;
use Ferry\MsgPack\Ext\UuidExtension;

/**
 * Immutable set of extensions, indexed by ext type code and by PHP class. Packers and
 * unpackers copy the indexes when constructed, so lookups cost one hash access.
 */
final class Extensions
{
    /** @var array<int, Extension> */
    private array $byType = [];
    /** @var array<string, Extension> */
    private array $byClass = [];

    public function __construct(Extension ...$extensions)
    {
        foreach ($extensions as $e) {
            $this->register($e);
        }
    }

    /** No extensions at all: every ext value decodes to Ext\RawExt. */
    public static function none(): self
    {
        return new self();
    }

    /** The default set: the spec's timestamp (-1). */
    public static function standard(): self
    {
        return new self(new TimestampExtension());
    }

    /** Timestamp plus Tarantool's decimal (1), uuid (2), error (3), datetime (4) and interval (6). */
    public static function tarantool(): self
    {
        return new self(
            new TimestampExtension(),
            new DecimalExtension(),
            new UuidExtension(),
            new ErrorStackExtension(),
            new DatetimeExtension(),
            new IntervalExtension(),
        );
    }

    /** A copy with $extension added, replacing any extension with the same type code or class. */
    public function with(Extension $extension): self
    {
        $copy = clone $this;
        $copy->register($extension);
        return $copy;
    }

    public function forType(int $type): ?Extension
    {
        return $this->byType[$type] ?? null;
    }

    public function forClass(string $class): ?Extension
    {
        if (isset($this->byClass[$class])) {
            return $this->byClass[$class];
        }
        foreach ($this->byClass as $registered => $e) {
            if (is_a($class, $registered, true)) {
                return $e;
            }
        }
        return null;
    }

    /** @return array<int, Extension> */
    public function byType(): array
    {
        return $this->byType;
    }

    /** @return array<string, Extension> */
    public function byClass(): array
    {
        return $this->byClass;
    }

    private function register(Extension $e): void
    {
        $type = $e->getType();
        if ($type < -128 || $type > 127) {
            throw new \InvalidArgumentException("Ext type code $type is outside -128..127");
        }
        $old = $this->byType[$type] ?? null;
        if ($old !== null && $old->getClass() !== null) {
            unset($this->byClass[$old->getClass()]);
        }
        $this->byType[$type] = $e;
        $class = $e->getClass();
        if ($class !== null) {
            $prev = $this->byClass[$class] ?? null;
            if ($prev !== null) {
                unset($this->byType[$prev->getType()]);
                $this->byType[$type] = $e;
            }
            $this->byClass[$class] = $e;
        }
    }
}
