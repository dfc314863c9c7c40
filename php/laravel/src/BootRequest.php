<?php

declare(strict_types=1);

namespace Ferry\Laravel;

use Illuminate\Contracts\Foundation\Application;
use Illuminate\Http\Request;

/**
 * Bootstrapper: a request for APP_URL while service providers register and boot, as
 * Laravel's console bootstrapper gives, but built without the process's $_SERVER, which
 * holds the worker's environment rather than anything a client sent.
 */
final class BootRequest
{
    public function bootstrap(Application $app): void
    {
        $app->instance('request', Request::create((string) $app->make('config')->get('app.url', 'http://localhost')));
    }
}
