<?php

declare(strict_types=1);

namespace Framework;

abstract class ServiceProvider
{
    abstract public function register(Container $container): void;

    public function boot(Router $router, EventDispatcher $events): void
    {
    }
}
