<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Async\Driver;
use Ferry\Tarantool\Async\EventLoop;
use Ferry\Tarantool\Async\Future;
use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Async\Scheduler;
use Ferry\Tarantool\Codec\Codec;
use Ferry\Tarantool\Codec\PureCodec;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ProtocolException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Handler;
use Ferry\Tarantool\Protocol\Encoder;
use Ferry\Tarantool\Protocol\Greeting;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\Response;
use Ferry\Tarantool\Schema\Schema;

/**
 * One IPROTO session, multiplexed: any number of requests in flight, replies matched by sync.
 * Opened lazily and reopened on the next request after a failure. Writes are coalesced:
 * requests queue in a buffer flushed once per loop tick (or right away when a caller blocks).
 *
 * Timeouts: a caller blocking outside the loop that times out closes the socket (a late reply
 * can then never be taken for another request's); under the loop only the late request is
 * dropped and its reply, if it ever comes, is discarded by sync.
 *
 * Split by concern: this file has the lifecycle and request entry points, Multiplexing the
 * pipelined/loop side, RoundTrip the blocking single-request side, Forking what a process
 * forked from the one that connected does (it connects anew, leaving the session alone).
 */
final class Connection implements Handler, Driver
{
    use Forking;
    use Multiplexing;
    use RoundTrip;

    public readonly Options $options;
    private readonly Codec $codec;
    private readonly Encoder $encoder;
    private readonly Schema $schema;
    private ?Socket $socket = null;
    private ?Greeting $greeting = null;
    private int $sync = 0;
    /**
     * Bytes of this session's output stream queued so far, and handed to the kernel so far
     * (wbuf holds the difference). A request whose frame starts below $written may have
     * reached the server; one starting at or above it certainly did not.
     */
    private int $queued = 0;
    private int $written = 0;
    /** While a Fiber opens the session (socket still null), others wait on this. */
    private ?Future $connecting = null;
    /** @var array<int, PendingRequest> in sending order (deadlines differ with per-call timeouts) */
    private array $pending = [];
    private string $rbuf = '';
    private string $wbuf = '';
    private bool $flushQueued = false;
    private ?string $watcher = null;
    /** The loop the flush, watcher and timer were registered with. */
    private ?EventLoop $loop = null;
    private ?string $timer = null;
    /** When the armed timer fires: re-armed when a request with an earlier deadline comes. */
    private float $timerAt = 0.0;
    private int $generation = 0;

    /**
     * @param array<string, mixed> $options see Options::DEFAULTS
     * @param \Closure(mixed, int): void|null $onPush default receiver of box.session.push() data
     */
    public function __construct(
        string|Options $uri,
        array $options = [],
        ?Codec $codec = null,
        private ?\Closure $onPush = null,
    ) {
        $this->options = $uri instanceof Options ? $uri : new Options($uri, $options);
        $this->codec = $codec ?? new PureCodec();
        $this->encoder = new Encoder($this->codec);
        $this->schema = new Schema($this);
        $this->owner = \getmypid();
    }

    public function codec(): Codec
    {
        return $this->codec;
    }

    public function schema(): Schema
    {
        return $this->schema;
    }

    public function isConnected(): bool
    {
        $this->ownSession();
        return $this->socket !== null;
    }

    /** Incremented on every (re)connect, so callers can tell a session was replaced. */
    public function generation(): int
    {
        return $this->generation;
    }

    /** The current session's greeting (null before connecting or on a reused persistent socket). */
    public function greeting(): ?Greeting
    {
        return $this->greeting;
    }

    /**
     * The socket stream while connected (for diagnostics and for loops that want to watch it).
     * @return resource|null
     */
    public function stream()
    {
        $this->ownSession();
        return $this->socket?->stream;
    }

    public function inFlight(): int
    {
        $this->ownSession();
        return \count($this->pending);
    }

    public function handle(Request $request): Response
    {
        $this->ownSession();
        for ($attempt = 0; ; $attempt++) {
            try {
                // Nothing else in flight and nobody to yield to: a plain blocking round trip,
                // without futures or the pending table (the common case in FPM and CLI code).
                if ($this->pending === [] && $this->wbuf === '' && (\Fiber::getCurrent() === null || !Loop::get()->isRunning())) {
                    return $this->roundTrip($request);
                }
                return $this->send($request)->await();
            } catch (ServerException $e) {
                if ($attempt > 0 || $e->getCode() !== Iproto::ER_WRONG_SCHEMA_VERSION || !$request->usesNames()) {
                    throw $e;
                }
                $this->schema->reset();
            }
        }
    }

    /**
     * Queues the request and returns its future at once. Requests naming spaces or indexes may
     * need schema lookups and a retry, so they run in a Fiber of their own.
     */
    public function sendAsync(Request $request): Future
    {
        if ($request->usesNames()) {
            return Scheduler::spawn(fn () => $this->handle($request));
        }
        return $this->send($request);
    }

    public function send(Request $request): PendingRequest
    {
        $this->ownSession();
        if ($this->socket === null) {
            $this->connect();
        }
        $body = $request->body;
        $schemaVersion = 0;
        if ($request->usesNames()) {
            [$body, $schemaVersion] = $this->schema->resolve($body);
            if ($this->socket === null) {
                $this->connect();
            }
        }
        $sync = ++$this->sync;
        return $this->enqueue($sync, $this->encoder->frame($request->type, $sync, $schemaVersion, $body), $request->onPush ?? $this->onPush, $request->timeout);
    }

    /**
     * Registers request $sync and queues its frame for the next flush.
     * @param float|null $timeout seconds for the reply; null: read_timeout
     */
    private function enqueue(int $sync, string $frame, ?\Closure $onPush, ?float $timeout = null): PendingRequest
    {
        $timeout ??= $this->options->readTimeout;
        $p = new PendingRequest($this, $sync, \microtime(true) + $timeout, $onPush, $this->queued, $timeout);
        $this->pending[$sync] = $p;
        $this->wbuf .= $frame;
        $this->queued += \strlen($frame);
        if ($this->watcher !== null && ($this->timer === null || $p->deadline < $this->timerAt)) {
            // A per-call timeout shorter than those in flight must not wait for their timer.
            $this->armTimer($p->deadline);
        }
        $loop = Loop::get();
        if (!$this->flushQueued || $loop !== $this->loop) {
            // Stays queued (at most one) if the loop never runs; blocking callers flush themselves.
            // Queued again if another loop was installed meanwhile (Loop::set()).
            if ($this->loop !== null && $loop !== $this->loop) {
                $this->unwatch();
            }
            $this->flushQueued = true;
            $this->loop = $loop;
            // Weakly: if the loop never runs, this must not keep the connection (and socket) alive.
            $self = \WeakReference::create($this);
            $loop->defer(static function () use ($self): void {
                $self->get()?->onFlush();
            });
        }
        return $p;
    }

    /**
     * Opens the session now (normally done by the first request). Inside a Fiber while the
     * loop runs, the TCP handshake, greeting and AUTH suspend only the calling Fiber; other
     * Fibers that need the connection meanwhile wait for that same attempt.
     */
    public function connect(): void
    {
        $this->ownSession();
        if ($this->socket !== null) {
            return;
        }
        if ($this->connecting !== null) {
            $this->connecting->await();
            if ($this->socket === null) {
                throw new ConnectionException('Connection to ' . $this->options->display . ' was closed as soon as it opened', $this->options->display);
            }
            return;
        }
        $o = $this->options;
        if (!$o->persistent && Scheduler::canSuspend()) {
            $this->connectSuspending();
            return;
        }
        $socket = Socket::open($o);
        $this->adopt($socket);
        if ($socket->greeting === null) {
            return;
        }
        if ($o->needsAuth()) {
            try {
                $this->authenticateNow((string) $o->user, $o->password);
            } catch (\Throwable $e) {
                $this->disconnect($e instanceof ConnectionException ? $e : new ConnectionException('Authentication failed', $o->display, false, $e));
                throw $e;
            }
        }
    }

    /** Makes $socket this connection's new session. */
    private function adopt(Socket $socket): void
    {
        $this->socket = $socket;
        if (\class_exists(\Ferry\Worker\Fork::class)) {
            // Lets Ferry's fork-server fork a zygote that holds this socket: see Forking.
            \Ferry\Worker\Fork::reopens($socket->stream);
        }
        $this->rbuf = $this->wbuf = '';
        $this->queued = $this->written = 0;
        $this->generation++;
        $this->schema->reset();
        if ($this->options->persistent) {
            // Sync numbers must not repeat those of a previous PHP request on the same socket.
            $this->sync = \random_int(1, 1 << 40);
        }
        if ($socket->greeting !== null) {
            $this->greeting = $socket->greeting;
        }
    }

    /**
     * connect() from a Fiber: the session stays invisible (socket null) until AUTH succeeded,
     * so no other Fiber can slip a request in ahead of it.
     */
    private function connectSuspending(): void
    {
        $o = $this->options;
        $this->connecting = $attempt = new Future();
        try {
            $deadline = \microtime(true) + $o->connectTimeout;
            $socket = Socket::openSuspending($o, $deadline);
            if ($o->needsAuth()) {
                try {
                    $sync = ++$this->sync;
                    $body = self::authRequest($socket->greeting, (string) $o->user, $o->password)->body;
                    $socket->write($this->encoder->frame(Iproto::AUTH, $sync, 0, $body), $o->writeTimeout, $o->display);
                    $buf = '';
                    $off = 0;
                    while (($f = FrameReader::next($buf, $off, \strlen($buf), $o->display)) === null) {
                        $buf .= $socket->readSuspending($deadline, $o->display);
                    }
                    $this->reply($f[0], $sync, $f[2], $f[3]);
                } catch (\Throwable $e) {
                    $socket->close();
                    throw $e;
                }
            }
            $this->adopt($socket);
            $attempt->resolve(null);
        } catch (\Throwable $e) {
            $attempt->reject($e);
            throw $e;
        } finally {
            $this->connecting = null;
        }
    }

    /** Re-authenticates the current session (AUTH may switch users at any time). */
    public function authenticate(string $user, string $password): void
    {
        if ($this->socket === null) {
            $this->connect();
        }
        if ($this->greeting === null) {
            throw new ConnectionException('Cannot re-authenticate a reused persistent socket: its greeting salt is gone', $this->options->display);
        }
        $this->handle(self::authRequest($this->greeting, $user, $password));
    }

    /** Fails every request in flight and closes the socket; the next request reconnects. */
    public function close(): void
    {
        // In a forked child, only its copy of the socket is released, never shut down.
        $this->ownSession();
        $this->disconnect(new ConnectionException('Connection closed by the client', $this->options->display));
    }

    public function block(Future $future): void
    {
        $this->ownSession();
        try {
            $this->flush(true);
            while ($future->isPending()) {
                if ($this->socket === null) {
                    throw new \LogicException('Awaited a request of a connection that was closed without failing it');
                }
                $deadline = $future instanceof PendingRequest ? $future->deadline : ($this->pending === [] ? null : self::earliest($this->pending));
                $this->rbuf .= $this->socket->read(($deadline ?? 0.0) - \microtime(true), 65536, $this->options->display, $future instanceof PendingRequest && $future->timeout > 0.0 ? $future->timeout : null);
                $this->dispatch();
            }
        } catch (ConnectionException $e) {
            $this->disconnect($e);
        }
    }

    private static function authRequest(Greeting $greeting, string $user, string $password): Request
    {
        return new Request(Iproto::AUTH, [
            Iproto::USER_NAME => $user,
            Iproto::TUPLE => ['chap-sha1', $greeting->scramble($password)],
        ]);
    }

    /** AUTH before anyone else may use the socket, in plain blocking I/O (also inside Fibers). */
    private function authenticateNow(string $user, string $password): void
    {
        $this->roundTrip(self::authRequest($this->greeting, $user, $password));
    }

    private function disconnect(\Throwable $reason): void
    {
        $this->unwatch();
        $this->socket?->close();
        $this->socket = null;
        $this->rbuf = $this->wbuf = '';
        $pending = $this->pending;
        $this->pending = [];
        foreach ($pending as $p) {
            $e = $reason;
            // Frame by frame: those the kernel took (even in part) may have been executed,
            // those still queued behind the failure point certainly were not.
            $sent = $p->start < $this->written;
            if ($reason instanceof ConnectionException && $reason->requestSent !== $sent) {
                $e = $reason->withRequestSent($sent);
            }
            $p->reject($e);
        }
    }

    /** Turns a reply frame into a Response, or throws the error it carries. */
    private function reply(int $code, int $sync, int $schemaVersion, string $raw): Response
    {
        $body = $raw === '' ? [] : $this->codec->unpack($raw);
        if (!\is_array($body)) {
            throw new ProtocolException(\sprintf('Reply body from %s is not a map', $this->options->display));
        }
        if ($code === Iproto::OK) {
            return new Response($sync, $schemaVersion, $body);
        }
        if ($code & Iproto::TYPE_ERROR) {
            throw ServerException::fromBody($code & 0x7fff, $body);
        }
        throw new ProtocolException(\sprintf('Unexpected reply type 0x%x from %s', $code, $this->options->display));
    }
}
