<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

/**
 * @internal One reading of the process state a request can leave behind (leak watch).
 *
 * Every subject is keyed "kind|name" and read as a size (an int that a leak makes grow:
 * elements, bytes, descriptors) and/or a signature (a short string that changes when the
 * value does). Signatures start with a readable part; anything after " #" is a hash that
 * only serves the comparison.
 */
final class LeakSnapshot
{
    /** Array entries or object properties hashed into a signature: bounded work per value. */
    private const SHALLOW = 32;
    /** Superglobals are rebuilt per request (globals mode) or belong to the process. */
    private const SKIP_GLOBALS = ['GLOBALS' => 1, '_GET' => 1, '_POST' => 1, '_COOKIE' => 1, '_FILES' => 1,
        '_SERVER' => 1, '_REQUEST' => 1, '_ENV' => 1, '_SESSION' => 1, 'argv' => 1, 'argc' => 1];

    /** @var array<string, int> */
    public array $sizes = [];
    /** @var array<string, string> */
    public array $values = [];
    /** @var array<string, ?string> ini_get_all() */
    public array $ini = [];

    /**
     * @param list<array{string, object|array<mixed>}> $watched what Worker::watch() names, resolved
     * @param bool $code whether to list the declared classes and functions (see LeakWatch::snapshot())
     * @param resource|null $fds /proc/self/fd, opened once: rewinding it costs half of opening it
     */
    public static function take(LeakStatics $statics, array $watched, bool $code = true, $fds = null): self
    {
        $s = new self();
        // Cyclic garbage waiting for the collector is not a leak; without this, memory
        // would look like it grows until the next automatic run.
        gc_collect_cycles();
        $s->sizes['memory|memory'] = memory_get_usage();
        $s->values['timezone|default timezone'] = date_default_timezone_get();
        $s->values['locale|locale'] = (string) setlocale(LC_ALL, 0);
        $s->values['cwd|working directory'] = (string) getcwd();
        $s->values['umask|umask'] = sprintf('%04o', umask());
        $s->values['output_buffer|output buffers'] = (string) ob_get_level();
        $handler = set_error_handler(null);
        restore_error_handler();
        $s->values['error_handler|error handler'] = self::callable($handler);
        $handler = set_exception_handler(null);
        restore_exception_handler();
        $s->values['exception_handler|exception handler'] = self::callable($handler);
        // Compared whole, and by key only when it differs (LeakWatch): hundreds of keys.
        $s->ini = ini_get_all(null, false);
        if (\is_resource($fds)) {
            rewinddir($fds);
            // Not "." and "..". The handle's own descriptor counts, as scandir()'s would.
            $n = -2;
            while (readdir($fds) !== false) {
                $n++;
            }
            $s->sizes['fd|open fds'] = $n;
        } elseif (($list = @scandir('/proc/self/fd')) !== false) {
            $s->sizes['fd|open fds'] = \count($list) - 2;
        }
        if ($code) {
            // Lists every internal function too: the costliest reading, taken less often.
            $s->sizes['functions|declared functions'] = \count(get_defined_functions()['user']);
        }
        $keys = [];
        foreach ($GLOBALS as $name => $value) {
            if (isset(self::SKIP_GLOBALS[$name])) {
                continue;
            }
            $keys[] = $name;
            $s->read("global|\$$name", $value);
        }
        $s->sizes['global|globals'] = \count($keys);
        foreach ($statics->read($code) as $name => $value) {
            $s->read("static|$name", $value);
        }
        $s->sizes['classes|declared classes'] = $statics->seen;
        $seen = [];
        foreach ($watched as [$name, $value]) {
            foreach (\is_array($value) ? $value : ['' => $value] as $key => $item) {
                $label = $key === '' ? $name : "{$name}[$key]";
                if (!\is_object($item)) {
                    $s->read("shared|$label", $item);
                } elseif (!isset($seen[$id = spl_object_id($item)])) {
                    // One object under several names (a container's aliases): watched once.
                    $seen[$id] = true;
                    $s->watchObject($label, $item);
                }
            }
        }

        return $s;
    }

    private function watchObject(string $name, object $object): void
    {
        $class = $object::class;
        $this->values["shared|$name"] = $class;
        foreach ((array) $object as $key => $value) {
            // Private and protected properties come as "\0Class\0name" and "\0*\0name".
            $property = ($at = strrpos((string) $key, "\0")) === false ? (string) $key : substr((string) $key, $at + 1);
            $this->read("shared|$name->$property", $value);
        }
    }

    private function read(string $key, mixed $value): void
    {
        $this->values[$key] = self::signature($value, 1);
        if (\is_array($value)) {
            $this->sizes[$key] = \count($value);
        } elseif (\is_string($value)) {
            $this->sizes[$key] = \strlen($value);
        } elseif ($value instanceof \SplObjectStorage || $value instanceof \ArrayObject || $value instanceof \SplDoublyLinkedList) {
            $this->sizes[$key] = \count($value);
        }
    }

    /**
     * A short string equal for equal values, at bounded cost: scalars as they are (long
     * strings by length and hash), arrays and objects by size or class and a hash of their
     * first entries, $depth levels down.
     */
    public static function signature(mixed $value, int $depth): string
    {
        if (\is_string($value)) {
            return \strlen($value) <= 40 ? '"' . $value . '"' : \strlen($value) . ' bytes #' . hash('crc32b', substr($value, 0, 4096));
        }
        if (\is_array($value)) {
            $n = \count($value);

            return $n . ($n === 1 ? ' element' : ' elements') . ($depth > 0 && $n > 0 ? ' #' . self::shallow($value, $depth - 1) : '');
        }
        if ($value instanceof \UnitEnum) {
            return $value::class . '::' . $value->name;
        }
        if ($value instanceof \Closure) {
            // The same code over the same objects is the same value, even when rebuilt.
            $f = new \ReflectionFunction($value);
            $bound = $f->getClosureThis();

            return self::readable(self::callable($value)) . ' #' . ($bound === null ? '' : spl_object_id($bound))
                . '/' . self::shallow($f->getClosureUsedVariables(), 0);
        }
        if (\is_object($value)) {
            // Which object, and its own scalars: what it holds further down changes with it
            // and is not this value's change (a service holding the container, say).
            return $value::class . ($depth > 0 ? ' #' . spl_object_id($value) . '/' . self::scalars((array) $value) : '');
        }
        if (\is_resource($value)) {
            return get_resource_type($value) . ' resource #' . get_resource_id($value);
        }
        if (\is_scalar($value) === false && $value !== null) {
            return 'closed resource';
        }

        return var_export($value, true);
    }

    /** @param array<mixed> $properties */
    private static function scalars(array $properties): string
    {
        $text = '';
        $i = 0;
        foreach ($properties as $key => $value) {
            if (\is_scalar($value) || $value === null) {
                $text .= $key . '=' . (\is_string($value) && \strlen($value) > 40 ? self::signature($value, 0) : var_export($value, true)) . "\n";
            }
            if (++$i === self::SHALLOW) {
                break;
            }
        }

        return hash('crc32b', $text);
    }

    /** @param array<mixed> $entries */
    private static function shallow(array $entries, int $depth): string
    {
        $text = '';
        $i = 0;
        foreach ($entries as $key => $value) {
            $text .= $key . '=' . self::signature($value, $depth) . "\n";
            if (++$i === self::SHALLOW) {
                break;
            }
        }

        return hash('crc32b', $text);
    }

    /**
     * Names a handler; a closure also by its object id, so that a new closure from the same
     * line (pushed by every request) does not look like the same handler.
     */
    public static function callable(mixed $handler): string
    {
        if ($handler === null) {
            return 'none';
        }
        if ($handler instanceof \Closure) {
            $f = new \ReflectionFunction($handler);
            $name = $f->getName();
            $where = $f->getFileName() === false ? $name : $f->getFileName() . ':' . $f->getStartLine();

            // {closure} up to PHP 8.3; 8.4 names it {closure:file:line}.
            return (str_contains($name, '{closure') ? "closure at $where" : "$name()") . ' #' . spl_object_id($handler);
        }
        if (\is_array($handler) && \count($handler) === 2) {
            [$target, $method] = array_values($handler);
            $class = \is_object($target) ? $target::class : (string) $target;

            return "$class::$method()" . (\is_object($target) ? ' #' . spl_object_id($target) : '');
        }
        if (\is_object($handler)) {
            return $handler::class . '::__invoke() #' . spl_object_id($handler);
        }

        return \is_string($handler) ? "$handler()" : get_debug_type($handler);
    }

    /** The readable part of a signature. */
    public static function readable(string $signature): string
    {
        $at = strpos($signature, ' #');
        $text = $at === false ? $signature : substr($signature, 0, $at);

        return \strlen($text) > 80 ? substr($text, 0, 77) . '...' : $text;
    }
}
