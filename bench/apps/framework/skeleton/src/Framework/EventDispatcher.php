<?php

declare(strict_types=1);

namespace Framework;

/**
 * Listeners are service ids resolved from the container on first dispatch.
 */
final class EventDispatcher
{
    /** @var array<class-string, list<string>> */
    private array $listeners = [];

    public function __construct(private readonly Container $container)
    {
    }

    public function listen(string $event, string $listenerId): void
    {
        $this->listeners[$event][] = $listenerId;
    }

    public function dispatch(object $event): object
    {
        foreach ($this->listeners[$event::class] ?? [] as $id) {
            $this->container->get($id)->handle($event);
        }

        return $event;
    }
}
