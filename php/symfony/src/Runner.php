<?php

declare(strict_types=1);

namespace Ferry\Symfony;

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Worker;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Symfony\Component\HttpKernel\HttpCache\HttpCache;
use Symfony\Component\HttpKernel\HttpKernelInterface;
use Symfony\Component\HttpKernel\KernelInterface;
use Symfony\Component\HttpKernel\TerminableInterface;
use Symfony\Component\Runtime\RunnerInterface;

/**
 * Serves an HttpKernel from a Ferry worker: the kernel boots once, then handles request
 * after request; kernel.terminate and the reset of services run after each answer has
 * been written, as after fastcgi_finish_request() under FPM.
 */
final class Runner implements RunnerInterface
{
    /**
     * @param int $bootBuffer level of the output buffer the runtime opened to hold what the
     *                        application printed before the handshake (0 for none)
     */
    /** @var array{SymfonyRequest, ?SymfonyResponse}|null the request being served, until its terminate hook */
    private ?array $pending = null;

    public function __construct(
        private readonly HttpKernelInterface $kernel,
        private readonly int $bootBuffer = 0,
    ) {
    }

    public function run(): int
    {
        if (getenv('FERRY_FIBERS') === '1') {
            throw new \LogicException(
                'Ferry\Symfony\Runtime cannot run in Fiber mode: the kernel keeps the current request in shared'
                . ' services (request_stack, session), so interleaved requests would see each other. Set pool.fibers: false.'
            );
        }
        // Before the handshake: an application that cannot boot stops `ferry serve` at
        // start with its own error, instead of failing every request.
        self::kernelOf($this->kernel)?->boot();
        $this->releaseBootOutput();

        $bridge = new Bridge(self::frontController());
        $http = HttpWorker::create(fibers: false);
        $worker = $http->worker();
        // A worker hook rather than one per job: HttpWorker::run() then serves the usual
        // request from ext/ferry's loop, which hands handlers a Request and no Job.
        $worker->onTerminate(function () use ($worker): void {
            $pending = $this->pending;
            $this->pending = null;
            if ($pending !== null) {
                $this->terminate($pending[0], $pending[1], $worker);
            }
        });
        $http->run(fn (Request $request): Response => $this->serve($request, $bridge));

        return 0;
    }

    private function serve(Request $request, Bridge $bridge): Response
    {
        $symfonyRequest = $bridge->request($request);
        // Set before handle(): the services are reset even when it throws.
        $this->pending = [$symfonyRequest, null];
        $symfonyResponse = $this->kernel->handle($symfonyRequest);
        $this->pending[1] = $symfonyResponse;

        return $bridge->response($symfonyResponse);
    }

    private function terminate(SymfonyRequest $request, ?SymfonyResponse $response, Worker $worker): void
    {
        try {
            if ($response !== null && $this->kernel instanceof TerminableInterface) {
                $this->kernel->terminate($request, $response);
            }
        } finally {
            try {
                // On a booted kernel that has handled a request since, boot() runs the
                // services_resetter: Symfony's own reset between requests, moved from the
                // start of the next request to right after this one, so that nothing of this
                // user (session, request-scoped services) stays in memory while idle.
                self::kernelOf($this->kernel)?->boot();
            } catch (\Throwable $e) {
                // Services half reset would carry this request's state into the next one.
                Worker::log('resetting the Symfony services failed, stopping this worker: ' . Worker::describe($e));
                $worker->stop();
            }
        }
    }

    /**
     * What the application printed while starting goes to the log, as the SDK sends any
     * output outside a request once it runs.
     */
    private function releaseBootOutput(): void
    {
        if ($this->bootBuffer < 1) {
            return;
        }
        $output = '';
        while (ob_get_level() >= $this->bootBuffer) {
            $output = ob_get_clean() . $output;
        }
        if ($output !== '') {
            fwrite(\STDERR, $output);
        }
    }

    private static function kernelOf(HttpKernelInterface $kernel): ?KernelInterface
    {
        if ($kernel instanceof HttpCache) {
            $kernel = $kernel->getKernel();
        }

        return $kernel instanceof KernelInterface ? $kernel : null;
    }

    private static function frontController(): string
    {
        $script = (string) ($_SERVER['SCRIPT_FILENAME'] ?? '');
        $real = $script === '' ? false : realpath($script);

        return $real === false ? $script : $real;
    }
}
