<?php

declare(strict_types=1);

namespace App\Home;

use Framework\Container;
use Framework\EventDispatcher;
use Framework\Router;
use Framework\ServiceProvider;

final class HomeServiceProvider extends ServiceProvider
{
    public function register(Container $container): void
    {
        $container->bind(HomeController::class);
    }

    public function boot(Router $router, EventDispatcher $events): void
    {
        $router->get('/', [HomeController::class, 'index']);
    }
}
