<?php

declare(strict_types=1);

namespace Ferry\Laravel;

use Carbon\Carbon;
use Illuminate\Container\Container;
use Illuminate\Contracts\Http\Kernel as HttpKernel;
use Illuminate\Foundation\Application;
use Illuminate\Pagination\PaginationState;
use Illuminate\Routing\Route;
use Illuminate\Support\Facades\Facade;
use Illuminate\Support\Str;

/**
 * Gives each request its own copy of the booted application and puts the shared services
 * back in their boot-time state afterwards.
 *
 * The copy is a clone of the base container: whatever a request resolves, binds or
 * registers lives in the clone and is dropped with it. Only services resolved at boot
 * (the warm list, and whatever service providers resolved) are shared, so those that keep
 * per-request state are swapped or reset here. docs/laravel.md lists every step, next to
 * the Octane listener it corresponds to; tests/ResetTest.php checks each one.
 */
final class Sandbox
{
    /**
     * Shared services that hold a container and use it to build things per request: during
     * a request they get the sandbox, so what they build comes from it; afterwards the base.
     * Service => method, or "$property" when the class has no setter.
     */
    private const CONTAINER_HOLDERS = [
        HttpKernel::class => 'setApplication',
        'router' => 'setContainer',
        'auth' => 'setApplication',
        'session' => 'setContainer',
        'db' => 'setApplication',
        'view' => 'setContainer',
        'validator' => 'setContainer',
        'filesystem' => 'setApplication',
        'mail.manager' => 'setApplication',
        'queue' => 'setApplication',
        \Illuminate\Contracts\Auth\Access\Gate::class => 'setContainer',
        \Illuminate\Contracts\Pipeline\Hub::class => 'setContainer',
        \Illuminate\Broadcasting\BroadcastManager::class => 'setApplication',
        \Illuminate\Notifications\ChannelManager::class => 'setContainer',
        'events' => '$container',
        'cache' => '$app',
        'log' => '$app',
    ];

    private ?Application $current = null;
    /** @var array<string, mixed> the view factory's shared data right after boot */
    private array $viewShared = [];
    private ?string $carbonLocale = null;

    public function __construct(private readonly Application $base)
    {
        if ($base->resolved('view')) {
            $this->viewShared = $base->make('view')->getShared();
        }
        if (class_exists(Carbon::class)) {
            $this->carbonLocale = Carbon::getLocale();
        }
    }

    public function active(): ?Application
    {
        return $this->current;
    }

    /**
     * Makes a fresh copy of the base application the current one (container instance,
     * facades) and returns it.
     */
    public function enter(): Application
    {
        if ($this->current !== null) {
            $this->leave();
        }
        $base = $this->base;
        $app = clone $base;
        $this->current = $app;
        $app->instance('app', $app);
        $app->instance(Container::class, $app);
        self::activate($app);

        // config([...]) at runtime changes this request's copy only.
        $app->instance('config', clone $base->make('config'));
        $this->lendContainer($app);

        // Request-scoped services: $app->scoped() bindings, config('ferry.scoped'), and the
        // framework's per-request singletons, are rebuilt from their bindings on first use.
        $app->forgetScopedInstances();
        foreach ((array) $app->make('config')->get('ferry.scoped', []) as $abstract) {
            $app->forgetInstance($abstract);
        }
        $app->forgetInstance('auth.driver');
        $app->forgetInstance('session.store');

        if ($base->resolved('url')) {
            // The URL generator keeps the request, forced root and scheme, and defaults: each
            // request gets a copy. Its session and key resolvers were bound to the base
            // application by the framework's provider; point them at this request's.
            $url = clone $base->make('url');
            $url->setSessionResolver(static fn () => $app->bound('session') ? $app->make('session') : null);
            $url->setKeyResolver(static fn () => $app->make('config')->get('app.key'));
            $app->instance('url', $url);
        }
        if ($base->resolved('view')) {
            $base->make('view')->share('app', $app);
        }
        if (class_exists(PaginationState::class)) {
            PaginationState::resolveUsing($app);
        }

        return $app;
    }

    /**
     * Drops the current copy and resets what the request may have changed in the services
     * it shared with the base application. Safe to call when no request is active.
     */
    public function leave(): void
    {
        $app = $this->current;
        if ($app === null) {
            return;
        }
        $this->current = null;
        try {
            $this->resetShared();
        } finally {
            $this->lendContainer($this->base);
            if (class_exists(PaginationState::class)) {
                PaginationState::resolveUsing($this->base);
            }
            // Breaks the cycles between the copy and the closures bound to it, so the
            // request's objects are freed now rather than at the next GC run.
            $app->flush();
            self::activate($this->base);
        }
    }

    private function resetShared(): void
    {
        $base = $this->base;
        if ($base->resolved('cookie')) {
            $base->make('cookie')->flushQueuedCookies();
        }
        if ($base->resolved('auth')) {
            $base->make('auth')->forgetGuards();
        }
        if ($base->resolved('session')) {
            // Stores (attributes, id, started flag) are built again for the next request.
            $base->make('session')->forgetDrivers();
        }
        if ($base->resolved('view')) {
            $view = $base->make('view');
            $view->flushState();
            $shared = $this->viewShared;
            (function () use ($shared): void {
                $this->shared = $shared;
            })->call($view);
        }
        $config = $base->make('config');
        if ($base->resolved('translator')) {
            $translator = $base->make('translator');
            $translator->setLocale($config->get('app.locale'));
            $translator->setFallback($config->get('app.fallback_locale'));
            if (method_exists($translator, 'flushParsedKeys')) {
                $translator->flushParsedKeys();
            }
        }
        // Keyed by whatever strings requests passed in: unbounded otherwise.
        if (method_exists(Str::class, 'flushCache')) {
            Str::flushCache();
        }
        if ($this->carbonLocale !== null && Carbon::getLocale() !== $this->carbonLocale) {
            Carbon::setLocale($this->carbonLocale);
        }
        if ($base->resolved('db')) {
            $this->resetDatabase($base->make('db'));
        }
        if ($base->resolved('cache')) {
            // An array store lives for one request under FPM; keep it that way.
            foreach ((array) $config->get('cache.stores', []) as $name => $store) {
                if (($store['driver'] ?? null) === 'array') {
                    $base->make('cache')->store($name)->flush();
                }
            }
        }
        if ($base->resolved('log')) {
            foreach ($base->make('log')->getChannels() as $channel) {
                if (method_exists($channel, 'withoutContext')) {
                    $channel->withoutContext();
                }
                // Buffering handlers (buffer, fingers crossed) flush and forget this request's records.
                $monolog = method_exists($channel, 'getLogger') ? $channel->getLogger() : null;
                if ($monolog instanceof \Monolog\ResettableInterface) {
                    $monolog->reset();
                }
            }
        }
        if ($base->resolved('router')) {
            $router = $base->make('router');
            $route = $router->current();
            if ($route instanceof Route) {
                // Route objects are shared: the controller they cached was built with this
                // request's dependencies.
                $route->flushController();
            }
            (function (): void {
                $this->current = null;
                $this->currentRequest = null;
            })->call($router);
        }
    }

    private function resetDatabase(object $db): void
    {
        foreach ($db->getConnections() as $name => $connection) {
            try {
                if ($connection->transactionLevel() > 0) {
                    \Ferry\Worker\Worker::log("laravel: request left a transaction open on connection \"$name\"; rolled back");
                    $connection->rollBack(0);
                }
                $connection->flushQueryLog();
                $connection->forgetRecordModificationState();
            } catch (\Throwable $e) {
                // A connection whose state cannot be known is not reused.
                \Ferry\Worker\Worker::log("laravel: connection \"$name\" could not be reset, disconnecting: " . $e->getMessage());
                $db->purge($name);
            }
        }
    }

    private function lendContainer(Application $container): void
    {
        foreach (self::CONTAINER_HOLDERS as $abstract => $setter) {
            if (!$this->base->resolved($abstract) || !$this->base->isShared($abstract)) {
                continue;
            }
            $service = $this->base->make($abstract);
            if ($setter[0] === '$') {
                $property = substr($setter, 1);
                (function () use ($property, $container): void {
                    if (property_exists($this, $property)) {
                        $this->{$property} = $container;
                    }
                })->call($service);
            } elseif (method_exists($service, $setter)) {
                $service->{$setter}($container);
            }
        }
    }

    private static function activate(Application $app): void
    {
        Container::setInstance($app);
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);
    }
}
