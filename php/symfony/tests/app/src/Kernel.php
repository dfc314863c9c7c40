<?php

declare(strict_types=1);

namespace App;

use App\Controller\PageController;
use App\EventListener\TerminateListener;
use App\Service\CookieQueue;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;

/**
 * A small MicroKernel application: one controller covering what a web app does
 * (routing, forms, uploads, cookies, the session, streamed and file responses, errors),
 * a ResetInterface service and a kernel.terminate listener.
 */
final class Kernel extends BaseKernel
{
    use MicroKernelTrait;

    public function registerBundles(): iterable
    {
        yield new FrameworkBundle();
    }

    public function boot(): void
    {
        if (!$this->booted && getenv('APP_BOOT_NOISE') === '1') {
            // What a stray var_dump() or a notice displayed at boot time does.
            echo "[app] output while booting\n";
        }
        parent::boot();
    }

    public function getProjectDir(): string
    {
        return \dirname(__DIR__);
    }

    public function getCacheDir(): string
    {
        return $this->varDir() . '/cache/' . $this->environment;
    }

    public function getLogDir(): string
    {
        return $this->varDir() . '/log';
    }

    /** APP_VAR_DIR lets tests and benchmarks keep the cache, sessions and uploads out of the checkout. */
    public function varDir(): string
    {
        $dir = $_SERVER['APP_VAR_DIR'] ?? $_ENV['APP_VAR_DIR'] ?? getenv('APP_VAR_DIR');

        return \is_string($dir) && $dir !== '' ? $dir : $this->getProjectDir() . '/var';
    }

    private function configureContainer(ContainerConfigurator $container): void
    {
        $container->extension('framework', [
            'secret' => 'ferry-symfony-test-app',
            'http_method_override' => false,
            'router' => ['utf8' => true],
            'php_errors' => ['log' => true],
            'session' => [
                'storage_factory_id' => 'session.storage.factory.native',
                'handler_id' => 'session.handler.native_file',
                'save_path' => $this->varDir() . '/sessions',
                'cookie_samesite' => 'lax',
                'cookie_secure' => 'auto',
            ],
        ]);
        $container->parameters()->set('app.var_dir', $this->varDir());

        $services = $container->services()->defaults()->autowire()->autoconfigure();
        $services->set(CookieQueue::class);
        $services->set(TerminateListener::class);
        $services->set(PageController::class)
            ->public()
            ->tag('controller.service_arguments')
            ->arg('$varDir', '%app.var_dir%');
    }

    private function configureRoutes(RoutingConfigurator $routes): void
    {
        $page = static fn (string $name, string $path, string $method = 'GET') => $routes
            ->add($name, $path)
            ->controller([PageController::class, $name])
            ->methods([$method]);

        $page('home', '/');
        $page('hello', '/hello/{name}');
        $page('form', '/form', 'POST');
        $page('json', '/json', 'POST');
        $page('upload', '/upload', 'POST');
        $page('setCookies', '/cookies/set');
        $page('readCookies', '/cookies/read');
        $page('counter', '/session');
        $page('login', '/login', 'POST');
        $page('whoami', '/whoami');
        $page('stream', '/stream');
        $page('file', '/file');
        $page('fail', '/fail');
        $page('fatal', '/fatal');
        $page('linger', '/linger');
        $page('resetProbe', '/reset-probe');
        $page('via', '/via');
    }
}
