<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

/**
 * @internal The static properties of the application's classes, for the leak watch.
 *
 * Classes are only ever added to a process, in declaration order, so each check reflects
 * just the classes declared since the last one and keeps their static properties; reading
 * them is then one call per property.
 */
final class LeakStatics
{
    /** Our own state (the SDK's caches and settings) is not the application's leak. */
    private const OWN = 'Ferry\\Worker\\';

    /** classes declared so far (the last read()) */
    public int $seen = 0;
    /** @var array<string, \ReflectionProperty> "Class::$name" => property */
    private array $properties = [];

    /**
     * @param bool $list whether to look for classes declared since the last listing (listing
     *                   them copies the whole list; the caller knows when none can be new)
     * @return iterable<string, mixed> "Class::$name" => value
     */
    public function read(bool $list = true): iterable
    {
        if ($list) {
            $classes = get_declared_classes();
            $count = \count($classes);
            for ($i = $this->seen; $i < $count; $i++) {
                $this->add($classes[$i]);
            }
            $this->seen = $count;
        }
        foreach ($this->properties as $name => $property) {
            if ($property->isInitialized()) {
                yield $name => $property->getValue();
            }
        }
    }

    private function add(string $class): void
    {
        if (str_starts_with($class, self::OWN)) {
            return;
        }
        $reflection = new \ReflectionClass($class);
        if ($reflection->isInternal()) {
            return;
        }
        foreach ($reflection->getProperties(\ReflectionProperty::IS_STATIC) as $property) {
            // An inherited static is the parent's own storage unless redeclared: read it once.
            if ($property->getDeclaringClass()->getName() === $reflection->getName()) {
                // An anonymous class's name carries a NUL and its file after "class@anonymous".
                $label = str_contains($class, "\0") ? strstr($class, "\0", true) : $class;
                $this->properties[$label . '::$' . $property->getName()] = $property;
            }
        }
    }
}
