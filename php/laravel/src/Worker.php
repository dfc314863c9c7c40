<?php

declare(strict_types=1);

namespace Ferry\Laravel;

use Ferry\Laravel\Http\RequestBridge;
use Ferry\Laravel\Http\ResponseBridge;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request as FerryRequest;
use Ferry\Worker\Http\Response as FerryResponse;
use Ferry\Worker\Worker as SdkWorker;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as HttpKernel;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Bootstrap\LoadEnvironmentVariables;
use Illuminate\Foundation\Bootstrap\RegisterProviders;
use Illuminate\Support\Env;

/**
 * Serves a Laravel application on a Ferry worker: boots it once, then runs each request
 * in a Sandbox (a copy of the booted application) and terminates it after the answer.
 *
 *     Worker::boot('/srv/app')->run();
 */
final class Worker
{
    /**
     * Services resolved at boot and shared by every request; each is either stateless
     * between requests or reset by the Sandbox. config('ferry.warm') replaces the list.
     */
    public const WARM = [
        'auth', 'cache', 'cache.store', 'cookie', 'db', 'encrypter', 'files', 'hash', 'log',
        'router', 'routes', 'session', 'translator', 'url', 'validator', 'view',
    ];

    private readonly Sandbox $sandbox;
    private readonly RequestBridge $bridge;
    /** @var array{0: HttpKernel, 1: \Illuminate\Http\Request, 2: \Symfony\Component\HttpFoundation\Response}|null */
    private ?array $pending = null;

    public function __construct(private readonly Application $app)
    {
        $this->sandbox = new Sandbox($app);
        $this->bridge = new RequestBridge($app->publicPath());
    }

    /**
     * Loads $basePath/bootstrap/app.php and bootstraps it as the HTTP kernel would, once.
     */
    public static function boot(string $basePath): self
    {
        $file = rtrim($basePath, '/') . '/bootstrap/app.php';
        if (!is_file($file)) {
            throw new \RuntimeException("no Laravel application in $basePath: $file does not exist");
        }
        $app = require $file;
        if (!$app instanceof Application) {
            throw new \RuntimeException("$file must return an Illuminate\\Foundation\\Application, got " . get_debug_type($app));
        }
        self::bootstrap($app);

        return new self($app);
    }

    public static function bootstrap(Application $app): void
    {
        // Providers ask runningInConsole() to decide whether to register commands and
        // the like: in a worker serving HTTP the answer is no, unless the user said so.
        $app->afterBootstrapping(LoadEnvironmentVariables::class, static function (Application $app): void {
            $console = Env::get('APP_RUNNING_IN_CONSOLE') === null ? false : null;
            (function () use ($console): void {
                $this->isRunningInConsole = $console;
            })->call($app);
        });
        $kernel = $app->make(HttpKernel::class);
        $bootstrappers = (fn (): array => $this->bootstrappers())->call($kernel);
        $at = array_search(RegisterProviders::class, $bootstrappers, true);
        array_splice($bootstrappers, $at === false ? \count($bootstrappers) : $at, 0, [BootRequest::class]);
        $app->bootstrapWith($bootstrappers);
        // Registered once here rather than in every request's copy on first use.
        $app->loadDeferredProviders();
        foreach ($app->make('config')->get('ferry.warm') ?? self::WARM as $abstract) {
            if ($app->bound($abstract)) {
                $app->make($abstract);
            }
        }
    }

    public function application(): Application
    {
        return $this->app;
    }

    /**
     * Serves requests until the server stops this worker. Fiber mode is refused: the
     * container, facades and Laravel's statics are one per process.
     */
    public function run(?HttpWorker $http = null): void
    {
        $http ??= HttpWorker::create();
        if ($http->worker()->fibers) {
            throw new \LogicException('ferry-laravel cannot run in Fiber mode (pool.fibers): Laravel keeps request state in process-wide statics');
        }
        $worker = $http->worker();
        $worker->onTerminate(function () use ($worker): void {
            try {
                $this->terminate();
            } catch (\Throwable $e) {
                SdkWorker::log('laravel: resetting the application after a request failed, stopping this worker: ' . SdkWorker::describe($e));
                $worker->stop();
            }
        });
        $http->run($this->handle(...));
    }

    /**
     * Runs one request in a fresh sandbox. The sandbox stays current until terminate().
     */
    public function handle(FerryRequest $request): FerryResponse
    {
        $this->terminate();
        $app = $this->sandbox->enter();
        $laravelRequest = $this->bridge->toLaravel($request);
        $app->instance('request', $laravelRequest);
        $kernel = $app->make(HttpKernel::class);
        $response = $kernel->handle($laravelRequest);
        $this->pending = [$kernel, $laravelRequest, $response];

        return ResponseBridge::toFerry($response);
    }

    /**
     * After the answer has been sent: terminable middleware and terminating() callbacks,
     * then the sandbox is dropped and the shared services reset.
     */
    public function terminate(): void
    {
        $pending = $this->pending;
        $this->pending = null;
        try {
            if ($pending !== null) {
                [$kernel, $request, $response] = $pending;
                try {
                    $kernel->terminate($request, $response);
                } catch (\Throwable $e) {
                    $this->report($e);
                }
            }
        } finally {
            $this->sandbox->leave();
        }
    }

    private function report(\Throwable $e): void
    {
        try {
            ($this->sandbox->active() ?? $this->app)->make(ExceptionHandler::class)->report($e);
        } catch (\Throwable) {
            SdkWorker::log('laravel: terminate failed: ' . SdkWorker::describe($e));
        }
    }
}
