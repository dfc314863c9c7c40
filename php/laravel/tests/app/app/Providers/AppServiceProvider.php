<?php

declare(strict_types=1);

namespace App\Providers;

use App\Auth\MemoryUserProvider;
use App\Services\BootCounter;
use App\Services\LazyCounter;
use App\Services\RequestCounter;
use App\Services\SharedCounter;
use Illuminate\Support\Facades\Auth;
use Illuminate\Support\Facades\View;
use Illuminate\Support\ServiceProvider;

final class AppServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->app->scoped(RequestCounter::class);
        $this->app->singleton(BootCounter::class);
        $this->app->singleton(SharedCounter::class);
        $this->app->singleton(LazyCounter::class);
    }

    public function boot(): void
    {
        Auth::provider('memory', static fn ($app, array $config) => new MemoryUserProvider($config['users']));
        View::share('owner', 'nobody');
        // Resolved at boot on purpose, as apps often do through facades in providers: the
        // worker must still give every request fresh or reset copies of these.
        $this->app->make(RequestCounter::class);
        $this->app->make(BootCounter::class);
        $this->app->make(SharedCounter::class);
        $this->app->make('cookie');
    }
}
