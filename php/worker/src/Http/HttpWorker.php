<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\Job;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * Serves HTTP requests forwarded by the Ferry gateway.
 *
 *     $http = HttpWorker::create();
 *     $http->run(fn (Request $r) => Response::text('Hello'));
 *
 * The handler returns a Response, a string (HTML body, status 200) or an array (JSON).
 * Anything it echoes is put before the returned body. An uncaught Throwable becomes a 500 answer
 * (details on STDERR, and in the body when FERRY_DEBUG=1); the worker keeps serving.
 */
final class HttpWorker
{
    /** @var list<\Closure> */
    private array $resetHooks = [];
    /** @var array<string, mixed> the CLI $_SERVER, restored after each request in globals mode */
    private array $baseServer;

    /**
     * @param bool $globals fill $_GET, $_POST, $_COOKIE, $_FILES, $_SERVER, $_REQUEST for each request
     *                      (for legacy code; not allowed in Fiber mode, where requests interleave)
     */
    public function __construct(
        private readonly Worker $worker,
        private readonly bool $debug = false,
        private readonly bool $globals = false,
    ) {
        if ($globals && $worker->fibers) {
            throw new \InvalidArgumentException('superglobals cannot be used in Fiber mode: concurrent requests would share them');
        }
        $this->baseServer = $_SERVER;
    }

    /**
     * A worker configured from the environment (see Worker::create()); FERRY_DEBUG=1 puts
     * exception details in 500 answers.
     */
    public static function create(bool $globals = false, ?bool $fibers = null): self
    {
        return new self(Worker::create($fibers), getenv('FERRY_DEBUG') === '1', $globals);
    }

    public function worker(): Worker
    {
        return $this->worker;
    }

    /**
     * Registers a hook run after every request (answered or failed), in registration order.
     * A hook that throws leaves the process in an unknown state: the worker logs it and
     * stops after answering, so the server starts a fresh one.
     */
    public function onReset(callable $hook): self
    {
        $this->resetHooks[] = $hook(...);

        return $this;
    }

    /**
     * @param callable(Request): (Response|string|array<mixed>) $handler
     */
    public function run(callable $handler): void
    {
        $handler = $handler(...);
        $this->worker->run(fn (Payload $payload, Job $job): Payload => $this->handle($handler, $payload, $job));
    }

    /**
     * Handles one job: decode, call the application, encode. Never throws.
     */
    public function handle(\Closure $handler, Payload $payload, Job $job): Payload
    {
        try {
            $request = Request::fromContext($payload->context, $payload->body);
            if ($this->globals) {
                $this->populateGlobals($request);
            }
            $response = self::toResponse($handler($request));
            $output = $job->takeOutput();
            // Echoed output happened before the handler returned, so it comes first,
            // as it would under FPM where echo goes out before anything later.
            $answer = new Payload($output === '' ? $response->body : $output . $response->body, $response->context());
        } catch (\Throwable $e) {
            $job->discardOutput();
            $answer = $this->failure($e, $payload->id);
        } finally {
            $this->reset();
        }

        return $answer;
    }

    /**
     * @param Response|string|array<mixed> $result
     */
    public static function toResponse(mixed $result): Response
    {
        if ($result instanceof Response) {
            return $result;
        }
        if (\is_string($result)) {
            return Response::html($result);
        }
        if (\is_array($result)) {
            return Response::json($result);
        }
        throw new \TypeError('HTTP handler must return Response, string or array, got ' . get_debug_type($result));
    }

    private function failure(\Throwable $e, int $id): Payload
    {
        $details = Worker::describe($e) . "\n" . $e->getTraceAsString();
        Worker::log("request $id failed: $details");
        $body = $this->debug ? $details . "\n" : "Internal Server Error\n";
        $response = Response::text($body, 500);

        return new Payload($response->body, $response->context());
    }

    private function reset(): void
    {
        if ($this->globals) {
            $_GET = $_POST = $_COOKIE = $_FILES = $_REQUEST = [];
            $_SERVER = $this->baseServer;
        }
        foreach ($this->resetHooks as $hook) {
            try {
                $hook();
            } catch (\Throwable $e) {
                Worker::log('reset hook failed, stopping this worker: ' . Worker::describe($e));
                $this->worker->stop();
            }
        }
    }

    private function populateGlobals(Request $request): void
    {
        $_GET = $request->query();
        $_POST = $request->post();
        $_COOKIE = $request->cookies;
        $_FILES = $request->files();
        $_REQUEST = array_replace($_GET, $_POST);
        $_SERVER = $request->server() + $this->baseServer;
    }
}
