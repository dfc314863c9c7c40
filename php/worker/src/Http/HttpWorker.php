<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

use Ferry\Worker\Internal\Fiber\FiberRunner;
use Ferry\Worker\Internal\Native\ExtRequest;
use Ferry\Worker\Internal\Native\NativeFibers;
use Ferry\Worker\Internal\Native\DirectFibers;
use Ferry\Worker\Internal\Native\DirectLoop;
use Ferry\Worker\Internal\Native\NativeLoop;
use Ferry\Worker\Internal\SequentialRunner;
use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Job;
use Ferry\Worker\Loop;
use Ferry\Worker\Payload;
use Ferry\Worker\Worker;

/**
 * Serves HTTP requests forwarded by the Ferry gateway.
 *
 *     $http = HttpWorker::create();
 *     $http->run(fn (Request $r) => Response::text('Hello'));
 *
 * The handler returns a Response, a string (HTML body) or an array (JSON); for the last two
 * the status is http_response_code()'s, 200 unless the handler set one, as under FPM.
 * Anything it echoes is put before the returned body. An uncaught Throwable becomes a 500 answer
 * (details on STDERR, and in the body when FERRY_DEBUG=1); the worker keeps serving.
 *
 * With ext/ferry loaded and outside Fiber mode, each request also has PHP's own request
 * state: header(), setcookie(), session_start(), move_uploaded_file() work as under FPM
 * and what they set goes into the answer (README, "With ext/ferry"), and
 * runFrontController() serves a classic front controller script (docs/legacy.md).
 *
 * Over 400 lines: handle() and resume() (the same job finished in PHP after ext/ferry's
 * loop ran its handler) must stay side by side with the reset and the status rules they
 * share; the frame work is WorkerSession's, requests and answers are Request's and
 * Response's, the superglobals Superglobals'.
 */
final class HttpWorker
{
    /** the worker's conversation, which also keeps the reset hooks and the kept superglobals (ext/ferry reads them) */
    private readonly WorkerSession $session;
    /** @var array<string, mixed> $_ENV as the first request found it (globals mode) */
    private array $baseEnv = [];
    /** @var array<string, true> the warnings this process has logged already */
    private static array $warned = [];
    /** whether requests go through ext/ferry's request boundary */
    private readonly bool $ext;
    /** the front controller runFrontController() serves, null for a handler */
    private ?string $script = null;

    /**
     * @param bool $globals rebuild $_GET, $_POST, $_COOKIE, $_FILES, $_SERVER, $_REQUEST, $_ENV for each request
     *                      (for legacy code; not allowed in Fiber mode, where requests interleave)
     */
    public function __construct(
        private readonly Worker $worker,
        private readonly bool $debug = false,
        private readonly bool $globals = false,
    ) {
        $this->session = $worker->session();
        if ($globals && $worker->fibers) {
            throw new \InvalidArgumentException('superglobals cannot be used in Fiber mode: concurrent requests would share them');
        }
        // FPM starts every request at 200; the CLI starts without a code (false).
        if (!$worker->fibers && http_response_code() === false && !headers_sent()) {
            http_response_code(200);
        }
        // Fiber mode interleaves requests, and PHP's header list, status and uploaded
        // files are one per process.
        $this->ext = !$worker->fibers && ExtRequest::available();
    }

    /**
     * Whether PHP's own header(), setcookie(), sessions and uploads work in requests
     * (ext/ferry is loaded and requests run one at a time).
     */
    public function usesExtension(): bool
    {
        return $this->ext;
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
        $this->session->resetHooks[] = $hook(...);

        return $this;
    }

    /** @internal whether reset hooks are registered: Fiber mode's C path leaves such workers to the PHP runner */
    public function hasResetHooks(): bool
    {
        return $this->session->resetHooks !== [];
    }

    /**
     * @param callable(Request): (Response|string|array<mixed>) $handler
     */
    public function run(callable $handler): void
    {
        $handler = $handler(...);
        $handle = fn (Payload $payload, Job $job): Payload => $this->handle($handler, $payload, $job);
        // Now, after the application's bootstrap (which may load environment files into
        // $_SERVER), and before ext/ferry's loop, which restores what is kept here.
        $this->keepGlobals();
        $session = $this->session;
        $resume = $this->resume(...);
        if (DirectLoop::wanted()) {
            // server.mode: direct. A worker that cannot serve direct says why and leaves
            // "direct" out of its handshake: the server then fails its boot with that reason.
            // Fiber mode runs every request in PHP (no ext path): only the connections are C's.
            if (($this->ext || $session->fibers) && !$this->globals && $this->script === null && DirectLoop::available($session)) {
                $session->direct = true;
                $session->handshake();
                StreamedAnswer::serving($session);
                if ($session->fibers) {
                    // Every request of every connection runs in a Fiber on the worker's loop.
                    $loop = $session->loop ??= Loop::get();
                    (new FiberRunner($session, $loop, null, new DirectFibers($session)))->run($handle);

                    return;
                }
                (new SequentialRunner($session, null, new DirectLoop($session, $handler, $resume, $handle)))->run($handle);

                return;
            }
            Worker::log(DirectLoop::unavailable($session));
        }
        if ($this->ext && !$this->globals && $this->script === null && NativeLoop::available($session)) {
            // ext/ferry runs the usual request itself and hands every other one to handle().
            $session->handshake();
            StreamedAnswer::serving($session);
            (new SequentialRunner($session, new NativeLoop($session, $handler, $resume)))->run($handle);

            return;
        }
        if (!$this->globals && $this->script === null && NativeFibers::available($session)) {
            // In Fiber mode ext/ferry reads the relay and runs the usual request in C, in a
            // Fiber; one that waits on the loop is handed to the PHP runner.
            $session->handshake();
            $loop = $session->loop ??= Loop::get();
            // The leak watch is off in Fiber mode; a loop of another kind leaves it to PHP.
            $native = $session->leaks === null && NativeFibers::available($session) ? new NativeFibers($session, $handler, $resume) : null;
            StreamedAnswer::serving($session);
            (new FiberRunner($session, $loop, $native))->run($handle);

            return;
        }
        $this->worker->run($handle);
    }

    /**
     * Serves a classic front controller (an index.php written for FPM) in this long-lived
     * worker: for every request the superglobals are filled, $script runs, and its output,
     * header() calls, cookies, status and session make the answer; exit() and die end the
     * response, not the worker. Needs ext/ferry and a sequential worker (docs/legacy.md).
     */
    public function runFrontController(string $script): void
    {
        $handler = $this->frontController($script);
        $this->keepGlobals();
        $this->worker->run(fn (Payload $payload, Job $job): Payload => $this->handle($handler, $payload, $job));
    }

    /**
     * The handler runFrontController() uses, for a loop of one's own. From the first call
     * on, handle() fills the superglobals and answers from PHP's own request state.
     *
     * @return \Closure(Request): string
     */
    public function frontController(string $script): \Closure
    {
        if (!$this->ext) {
            throw new \LogicException($this->worker->fibers
                ? 'a front controller cannot run in Fiber mode: its headers, status and session are per process'
                : 'a front controller needs ext/ferry (PHP\'s header(), exit() and sessions per request): build it with ext/ferry/build.sh and set pool.php.extension');
        }
        $path = realpath($script);
        if ($path === false || !is_file($path)) {
            throw new \InvalidArgumentException("front controller $script is not a file");
        }
        if ($this->script !== null && $this->script !== $path) {
            throw new \LogicException("this worker serves {$this->script} already");
        }
        $this->script = $path;

        return LegacyScript::handler($path);
    }

    /**
     * Handles one job: decode, call the application, encode. Never throws.
     */
    public function handle(\Closure $handler, Payload $payload, Job $job): Payload
    {
        $ext = $this->ext;
        $running = StreamedAnswer::begin($this->session, $payload->id);
        try {
            $request = Request::fromContext($payload->context, $payload->body);
            if ($this->globals || $this->script !== null) {
                $this->populateGlobals($request);
            } else {
                // As under FPM, what the last request wrote into them is not this one's.
                if ($this->session->kept === []) {
                    $this->keepGlobals();
                }
                Superglobals::restore($this->session->kept);
            }
            if ($ext) {
                if (!$this->globals && $this->script === null) {
                    // session_start() takes the session id from $_COOKIE, as PHP fills it.
                    $_COOKIE = $request->cookies;
                }
                ExtRequest::begin($request);
                $result = $handler($request);
                // Before the output is taken: a header_register_callback() callback may print.
                $response = $this->script !== null ? ExtRequest::frontControllerAnswer() : ExtRequest::answer($result);
            } else {
                $response = $this->plainResponse($handler($request));
            }
            $answer = $this->payload($response, $job);
        } catch (\Throwable $e) {
            $job->failed = true;
            $job->discardOutput();
            $answer = $this->failure($e, $payload->id);
        } finally {
            StreamedAnswer::end($this->session, $running);
            if ($ext) {
                ExtRequest::abandon();
            }
            $this->reset();
        }

        return $answer;
    }

    /**
     * @internal The rest of handle() for a job whose handler ext/ferry's loop ran (NativeLoop,
     * or NativeFibers in Fiber mode) and whose outcome is not its usual case: $error if the
     * handler threw, else $result and what PHP's request state collected ($php, from
     * request_end(); null in Fiber mode), or null when request_end() itself threw $error.
     *
     * @param array{status: int, reason?: string, headers: array<string, list<string>>}|null $php
     */
    public function resume(Job $job, mixed $result, ?array $php, ?\Throwable $error): Payload
    {
        try {
            if ($error !== null) {
                throw $error;
            }
            $response = $this->ext ? ExtRequest::answerWith($result, (array) $php) : $this->plainResponse($result);
            $answer = $this->payload($response, $job);
        } catch (\Throwable $e) {
            $job->failed = true;
            $job->discardOutput();
            $answer = $this->failure($e, $job->payload->id);
        } finally {
            if ($this->ext) {
                StreamedAnswer::end($this->session, null);
                ExtRequest::abandon();
            } else {
                StreamedAnswer::end($this->session, \Fiber::getCurrent());
            }
            $this->reset();
        }

        return $answer;
    }

    /** The Response for what the handler returned, without ext/ferry's request state. */
    private function plainResponse(mixed $result): Response
    {
        // Usually PHP's status is untouched and no header was set: nothing to warn about.
        $code = http_response_code();
        $status = ($code === 200 || $code === false) && headers_list() === [] ? 200 : $this->phpStatus($result);

        return self::toResponse($result, $status);
    }

    /** The answer for $response, after what the job echoed. */
    private function payload(Response $response, Job $job): Payload
    {
        $output = $job->takeOutput();
        if ($response->getParts() !== null) {
            return StreamedAnswer::send($this->session, $response, $output, $job);
        }
        if ($output !== '' && $response->getFile() !== null) {
            // The server sends the file as the whole body: nothing can go before it.
            self::warnOnce('output-file', sprintf('%d bytes echoed by a handler that returned a file response were dropped', \strlen($output)));
            $output = '';
        }

        // Echoed output happened before the handler returned, so it comes first,
        // as it would under FPM where echo goes out before anything later.
        return new Payload($output === '' ? $response->body : $output . $response->body, $response->context());
    }

    /**
     * @param Response|string|array<mixed> $result
     * @param int $status for a string or array; a Response keeps its own
     */
    public static function toResponse(mixed $result, int $status = 200): Response
    {
        if ($result instanceof Response) {
            return $result;
        }
        if (\is_string($result)) {
            return Response::html($result, $status);
        }
        if (\is_array($result)) {
            return Response::json($result, $status);
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

    /**
     * The status PHP's own functions set during the request (http_response_code(), and
     * header() as a side effect), for a string or array result.
     *
     * header(), setcookie() and setrawcookie() are dropped by the CLI, which keeps no header
     * list: only their effect on the status, or a SAPI that does keep them, shows. Either
     * is logged once per process, since the rest of such calls cannot be seen.
     */
    private function phpStatus(mixed $result): int
    {
        $code = http_response_code();
        $listed = headers_list() !== [];
        if ($listed || ($code !== false && $code !== 200 && isset(Status::REDIRECTS[$code]))) {
            self::warnOnce(
                'headers',
                ($listed ? 'header(), setcookie() or setrawcookie() was called' : "status $code was set through PHP, as header('Location: ...') does")
                . ': headers set with PHP\'s functions are never sent by a Ferry worker;'
                . ' return a Response and use its header(), addHeader(), cookie(), or Response::redirect()'
            );
        }
        if ($code === false || $code === 200 || $result instanceof Response) {
            return 200;
        }
        if ($this->worker->fibers) {
            // One code for the whole process while requests interleave: it may be another
            // request's.
            self::warnOnce('fiber-status', "http_response_code($code) was called in Fiber mode, where the code is shared by concurrent requests and ignored: return a Response with the status");

            return 200;
        }

        return $code;
    }

    private static function warnOnce(string $kind, string $message): void
    {
        if (!isset(self::$warned[$kind])) {
            self::$warned[$kind] = true;
            Worker::log("warning: $message (logged once per worker)");
        }
    }

    private function reset(): void
    {
        if (($this->globals || $this->script !== null) && $this->session->kept !== []) {
            $_GET = $_POST = $_COOKIE = $_FILES = $_REQUEST = [];
            $_SERVER = $this->session->kept['_SERVER'];
            $_ENV = $this->baseEnv;
        } elseif ($this->ext) {
            $_COOKIE = [];
        }
        if (!$this->worker->fibers && !$this->ext) {
            // The extension's request_end() resets both, and keeps what FPM would.
            $code = http_response_code();
            if ($code !== 200 && $code !== false && !headers_sent()) {
                http_response_code(200);
            }
            if (headers_list() !== []) {
                header_remove();
            }
        }
        // ext/ferry's loop runs them itself for the jobs it answers.
        $this->session->runResetHooks();
    }

    /**
     * Takes the superglobals as the application's bootstrap left them, once: run() does,
     * else the first request (a loop of one's own calling handle()), instead of when the
     * worker object was built, so what the bootstrap put in them stays for every request.
     */
    private function keepGlobals(): void
    {
        if ($this->session->kept === []) {
            $this->session->kept = Superglobals::keep();
            $this->baseEnv = $_ENV;
        }
    }

    /**
     * Rebuilds every superglobal from the request and the process's own $_SERVER/$_ENV, so
     * nothing written into them by an earlier request survives.
     */
    private function populateGlobals(Request $request): void
    {
        $this->keepGlobals();
        $_ENV = $this->baseEnv;
        Superglobals::fill($request, $this->session->kept['_SERVER']);
        if ($this->script !== null) {
            LegacyScript::server($this->script);
        }
        $_REQUEST = Form::requestVariables($_GET, $_POST, $_COOKIE);
    }

    /**
     * $_REQUEST as PHP builds it (see Form::requestVariables()).
     *
     * @param array<string|int, mixed> $get
     * @param array<string|int, mixed> $post
     * @param array<string|int, mixed> $cookie
     * @return array<string|int, mixed>
     */
    public static function requestVariables(array $get, array $post, array $cookie, ?string $order = null): array
    {
        return Form::requestVariables($get, $post, $cookie, $order);
    }
}
