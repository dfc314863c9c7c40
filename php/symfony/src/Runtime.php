<?php

declare(strict_types=1);

namespace Ferry\Symfony;

use Ferry\Worker\Worker;
use Symfony\Component\HttpKernel\HttpKernelInterface;
use Symfony\Component\Runtime\RunnerInterface;
use Symfony\Component\Runtime\SymfonyRuntime;

/**
 * A Symfony Runtime that makes an unchanged front controller
 * (`return fn (array $context) => new Kernel(...)`) a Ferry worker when Ferry started the
 * process, and is exactly SymfonyRuntime everywhere else (FPM, `php -S`, the console).
 *
 * Select it with APP_RUNTIME=Ferry\Symfony\Runtime or composer.json's
 * extra.runtime.class; it takes SymfonyRuntime's options.
 */
class Runtime extends SymfonyRuntime
{
    private readonly bool $worker;
    /** level of the output buffer held until the handshake, 0 for none */
    private int $bootBuffer = 0;

    public function __construct(array $options = [])
    {
        // The runtime hands $_SERVER to the front controller's closure as $context long
        // before a Worker exists: the relay settings must be out of it by then.
        $this->worker = \in_array(\PHP_SAPI, ['cli', 'phpdbg'], true) && Worker::claimEnvironment();
        if ($this->worker) {
            // Until the handshake, output would reach the CLI's STDOUT, and its first
            // byte makes headers_sent() true for good: Symfony's native session storage
            // would then refuse every session. The Runner sends it to the log instead.
            ob_start();
            $this->bootBuffer = ob_get_level();
        }
        parent::__construct($options);
        if ($this->worker) {
            // SymfonyErrorHandler may display errors on STDOUT in the CLI; in a worker
            // that is a response body. Ferry's own setting (STDERR, the log) stands.
            ini_set('display_errors', 'stderr');
        }
    }

    public function getRunner(?object $application): RunnerInterface
    {
        if ($this->worker && $application instanceof HttpKernelInterface) {
            return new Runner($application, $this->bootBuffer);
        }
        // A console application or a one-off script: its output is its own.
        while ($this->bootBuffer > 0 && ob_get_level() >= $this->bootBuffer) {
            ob_end_flush();
        }
        $this->bootBuffer = 0;

        return parent::getRunner($application);
    }
}
