<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

use Ferry\Worker\Worker;

/**
 * @internal What the application names with Worker::watch(): its long-lived objects, read
 * by the leak watch at each check. Kept whether or not the watch is on, so that naming
 * costs one array entry when it is off.
 */
final class LeakWatched
{
    /** @var array<string, object|array<mixed>> name => value (objects as WeakReference) */
    private static array $values = [];

    /** @param object|array<mixed> $value see Worker::watch() */
    public static function add(string $name, object|array $value): void
    {
        self::$values[$name] = \is_object($value) && !$value instanceof \Closure ? \WeakReference::create($value) : $value;
    }

    /**
     * The watched values as they are now: objects still alive, Closures called. A name whose
     * object is gone or whose Closure fails is dropped.
     *
     * @return list<array{string, object|array<mixed>}>
     */
    public static function resolve(): array
    {
        $watched = [];
        foreach (self::$values as $name => $value) {
            if ($value instanceof \WeakReference) {
                $value = $value->get();
            } elseif ($value instanceof \Closure) {
                try {
                    $value = $value();
                } catch (\Throwable $e) {
                    Worker::log("leak watch: the value watched as \"$name\" could not be read, no longer watched: " . Worker::describe($e));
                    $value = null;
                }
            }
            if (\is_object($value) || \is_array($value)) {
                $watched[] = [$name, $value];
            } else {
                unset(self::$values[$name]);
            }
        }

        return $watched;
    }
}
