<?php

declare(strict_types=1);

namespace App\Http\Controllers;

use App\Services\BootCounter;
use App\Services\LazyCounter;
use App\Services\RequestCounter;
use App\Services\SharedCounter;
use Carbon\Carbon;
use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;
use Illuminate\Routing\Controller;
use Illuminate\Support\Facades\App;
use Illuminate\Pagination\Paginator;
use Illuminate\Support\Facades\Auth;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Cookie;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Log;
use Illuminate\Support\Facades\URL;
use Illuminate\Support\Facades\View;
use Illuminate\Support\Str;

/**
 * mutate/{name} changes every piece of per-request state the worker must reset; state
 * reports all of it, so a test can tell whether one user's request saw another's.
 */
final class StateController extends Controller
{
    private string $constructedFor;

    public function __construct(Request $request)
    {
        $this->constructedFor = $request->path();
    }

    public function mutate(Request $request, string $name): JsonResponse
    {
        Auth::loginUsingId($name === 'alice' ? 1 : 2);
        $request->session()->put('owner', $name);
        Cookie::queue('owner_' . $name, $name, 10);
        config(['app.probe' => $name]);
        App::setLocale($name === 'alice' ? 'fr' : 'de');
        Carbon::setLocale($name === 'alice' ? 'fr' : 'de');
        View::share('owner', $name);
        URL::forceRootUrl('http://' . $name . '.example');
        if (self::hasDatabase()) {
            DB::beginTransaction();
        }
        Cache::put('owner', $name);
        Log::withContext(['owner' => $name]);
        Log::channel('buffered')->info("buffered record of $name");
        Str::snake('OwnerIs' . ucfirst($name));
        __('owner.' . $name);
        foreach ([RequestCounter::class, BootCounter::class, LazyCounter::class, SharedCounter::class] as $class) {
            app($class)->count++;
        }

        return $this->state($request);
    }

    public function state(Request $request): JsonResponse
    {
        $cookies = array_keys($request->cookies->all());
        sort($cookies);

        return response()->json([
            'user' => Auth::user()->name ?? null,
            'session' => $request->session()->get('owner'),
            'cookies' => array_values(array_diff($cookies, [config('session.cookie')])),
            'config' => config('app.probe'),
            'locale' => App::getLocale(),
            'translator_locale' => app('translator')->getLocale(),
            'carbon_locale' => Carbon::getLocale(),
            'view_owner' => View::shared('owner'),
            'url' => url('/x'),
            'transaction_level' => self::hasDatabase() ? DB::transactionLevel() : null,
            'cached_owner' => Cache::get('owner'),
            'paginator_path' => Paginator::resolveCurrentPath(),
            'route_before_routing' => $request->attributes->get('route_before_routing'),
            // Laravel 8 has no getter for the shared log context.
            'log_context' => (fn () => $this->context)->call(Log::driver()),
            // Caches keyed by what earlier requests passed in (no getters either).
            'str_cache' => array_keys(array_filter((fn () => static::$snakeCache)->bindTo(null, Str::class)(), static fn ($key) => str_starts_with($key, 'OwnerIs'), ARRAY_FILTER_USE_KEY)),
            'parsed_keys' => array_values(array_filter(array_keys((fn () => $this->parsed)->call(app('translator'))), static fn ($key) => str_starts_with($key, 'owner.'))),
            'request_counter' => app(RequestCounter::class)->count,
            'boot_counter' => app(BootCounter::class)->count,
            'lazy_counter' => app(LazyCounter::class)->count,
            'shared_counter' => app(SharedCounter::class)->count,
            'rendered' => trim(view('page')->render()),
        ]);
    }

    /** The database cases need pdo_sqlite (Debian: php8.2-sqlite3); the rest runs without. */
    public static function hasDatabase(): bool
    {
        return \in_array('sqlite', \PDO::getAvailableDrivers(), true);
    }

    public function constructedFor(): string
    {
        return $this->constructedFor;
    }
}
