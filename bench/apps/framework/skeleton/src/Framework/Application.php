<?php

declare(strict_types=1);

namespace Framework;

/**
 * Boot: configuration, core services, every module's provider (bindings, routes,
 * listeners), middleware. This is the per-request cost under FPM and a one-off in Ferry.
 */
final class Application
{
    public static function boot(string $root): Kernel
    {
        $container = new Container();
        $config = Config::load("$root/config/app.php");
        $container->instance(Config::class, $config);
        $container->instance(Container::class, $container);
        foreach ([Translator::class, Cache::class, Database::class, Metrics::class, Logger::class, View::class,
                  EventDispatcher::class, Router::class] as $core) {
            $container->bind($core);
        }
        $router = $container->get(Router::class);
        $events = $container->get(EventDispatcher::class);
        $providers = [];
        foreach (require "$root/config/providers.php" as $class) {
            $providers[] = $provider = new $class();
            $provider->register($container);
        }
        foreach ($providers as $provider) {
            $provider->boot($router, $events);
        }
        $middleware = [];
        foreach ($config->get('middleware') as $class) {
            $container->bind($class);
            $middleware[] = $container->get($class);
        }

        return new Kernel($container, $router, $middleware, $container->get(View::class));
    }
}
