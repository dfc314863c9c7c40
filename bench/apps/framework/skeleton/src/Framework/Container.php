<?php

declare(strict_types=1);

namespace Framework;

/**
 * Service container: explicit factories, or autowiring by constructor types (reflection),
 * one shared instance per id. Built at boot by the service providers.
 */
final class Container
{
    /** @var array<string, ?\Closure> id => factory, null = autowire the class named id */
    private array $factories = [];
    /** @var array<string, object> */
    private array $instances = [];
    /** @var array<string, true> ids being built, to report cycles instead of recursing forever */
    private array $building = [];

    public function bind(string $id, ?\Closure $factory = null): void
    {
        $this->factories[$id] = $factory;
        unset($this->instances[$id]);
    }

    public function instance(string $id, object $service): void
    {
        $this->factories[$id] = null;
        $this->instances[$id] = $service;
    }

    public function has(string $id): bool
    {
        return \array_key_exists($id, $this->factories);
    }

    public function get(string $id): object
    {
        if (isset($this->instances[$id])) {
            return $this->instances[$id];
        }
        if (!\array_key_exists($id, $this->factories)) {
            throw new ContainerException("no service registered as $id");
        }
        if (isset($this->building[$id])) {
            throw new ContainerException('dependency cycle: ' . implode(' -> ', array_keys($this->building)) . " -> $id");
        }
        $this->building[$id] = true;
        try {
            $factory = $this->factories[$id];
            $service = $factory !== null ? $factory($this) : $this->autowire($id);
        } finally {
            unset($this->building[$id]);
        }

        return $this->instances[$id] = $service;
    }

    private function autowire(string $class): object
    {
        $ref = new \ReflectionClass($class);
        $ctor = $ref->getConstructor();
        if ($ctor === null) {
            return new $class();
        }
        $args = [];
        foreach ($ctor->getParameters() as $param) {
            $type = $param->getType();
            if (!$type instanceof \ReflectionNamedType || $type->isBuiltin()) {
                throw new ContainerException("cannot autowire \${$param->getName()} of $class");
            }
            $args[] = $this->get($type->getName());
        }

        return $ref->newInstanceArgs($args);
    }
}
