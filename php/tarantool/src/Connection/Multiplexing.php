<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ProtocolException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Exception\TimeoutException;
use Ferry\Tarantool\Protocol\Iproto;

/**
 * The pipelined side of Connection: the coalesced write buffer, the loop's readable watcher
 * and deadline timer while requests are in flight, and reply dispatch by sync.
 *
 * @internal used by Connection only; shares its state
 */
trait Multiplexing
{
    private function onFlush(): void
    {
        $this->flushQueued = false;
        $this->ownSession();
        $this->flush();
        if ($this->pending !== [] && $this->watcher === null && $this->socket !== null) {
            $this->watch();
        }
    }

    private function flush(bool $blocking = false): void
    {
        if ($this->wbuf === '' || $this->socket === null) {
            return;
        }
        $data = $this->wbuf;
        $this->wbuf = '';
        $in = '';
        try {
            // Replies that arrive while a large batch goes out are only buffered here:
            // settling them now could resume a Fiber that writes in the middle of this write.
            $this->socket->write($data, $this->options->writeTimeout, $this->options->display, $this->written,
                static function (string $bytes) use (&$in): void { $in .= $bytes; });
        } catch (ConnectionException $e) {
            if ($blocking) {
                throw $e;
            }
            $this->disconnect($e);
            return;
        }
        if ($in !== '') {
            $this->rbuf .= $in;
            $this->dispatch();
        }
    }

    private function watch(): void
    {
        $loop = $this->loop ??= Loop::get();
        $this->watcher = $loop->onReadable($this->socket->stream, fn () => $this->onReadable());
        if ($this->timer === null) {
            $this->armTimer(self::earliest($this->pending));
        }
    }

    private function armTimer(float $at): void
    {
        if ($this->timer !== null) {
            $this->loop->cancel($this->timer);
        }
        $this->timerAt = $at;
        $this->timer = $this->loop->delay(\max(0.0, $at - \microtime(true)), fn () => $this->onTimer());
    }

    /** @param array<int, PendingRequest> $pending */
    private static function earliest(array $pending): float
    {
        $at = \INF;
        foreach ($pending as $p) {
            if ($p->deadline < $at) {
                $at = $p->deadline;
            }
        }
        return $at;
    }

    private function unwatch(): void
    {
        $loop = $this->loop ?? Loop::get();
        if ($this->watcher !== null) {
            $loop->cancel($this->watcher);
            $this->watcher = null;
        }
        if ($this->timer !== null) {
            $loop->cancel($this->timer);
            $this->timer = null;
        }
    }

    private function onReadable(): void
    {
        if ($this->owner !== \getmypid()) {
            $this->leaveInheritedSession();
            return;
        }
        $data = @\fread($this->socket->stream, 65536);
        if ($data === '' || $data === false) {
            $this->disconnect(new ConnectionException('Connection closed by peer ' . $this->options->display, $this->options->display, true));
            return;
        }
        $this->rbuf .= $data;
        $this->dispatch();
        $this->flush();
        if ($this->pending === [] && $this->socket !== null) {
            $this->unwatch();
        }
    }

    private function onTimer(): void
    {
        $this->timer = null;
        $now = \microtime(true);
        // Deadlines differ with per-call timeouts, so every request is checked.
        foreach ($this->pending as $sync => $p) {
            if ($p->deadline <= $now) {
                unset($this->pending[$sync]);
                // Its frame may still be queued, but then it will go out: maybe sent either way.
                $p->reject(new TimeoutException(\sprintf('No reply within %.3f s from %s (request #%d)', $p->timeout, $this->options->display, $sync), $this->options->display, true));
            }
        }
        // Rejections resume Fibers that may have sent more requests meanwhile.
        if ($this->pending !== [] && $this->watcher !== null && $this->timer === null) {
            $this->armTimer(self::earliest($this->pending));
        }
    }

    /** Splits the read buffer into frames, then settles their requests (safe against re-entry). */
    private function dispatch(): void
    {
        $buf = $this->rbuf;
        $len = \strlen($buf);
        $off = 0;
        $ready = [];
        try {
            while (($frame = FrameReader::next($buf, $off, $len, $this->options->display)) !== null) {
                $p = $this->pending[$frame[1]] ?? null;
                if ($p === null) {
                    continue; // reply to a request that already timed out
                }
                if ($frame[0] === Iproto::CHUNK) {
                    $ready[] = [$p, $frame[3]];
                    continue;
                }
                unset($this->pending[$frame[1]]);
                $p->code = $frame[0];
                $p->schemaVersion = $frame[2];
                $p->raw = $frame[3];
                $ready[] = $p;
            }
        } catch (ProtocolException $e) {
            $this->disconnect($e);
        }
        $this->rbuf = $off === $len ? '' : \substr($buf, $off);
        foreach ($ready as $p) {
            if ($p instanceof PendingRequest) {
                $this->settle($p);
            } else {
                $this->push($p[0], $p[1]);
            }
        }
    }

    private function settle(PendingRequest $p): void
    {
        try {
            $response = $this->reply($p->code, $p->sync, $p->schemaVersion, $p->raw);
        } catch (ServerException|ProtocolException $e) {
            $p->reject($e);
            return;
        }
        $p->resolve($response);
    }

    private function push(PendingRequest $p, string $raw): void
    {
        if ($p->onPush === null || !$p->isPending()) {
            return;
        }
        try {
            $body = $raw === '' ? [] : $this->codec->unpack($raw);
            ($p->onPush)($body[Iproto::DATA][0] ?? null, $p->sync);
        } catch (\Throwable $e) {
            // The caller learns through its request; the final reply will be ignored.
            unset($this->pending[$p->sync]);
            $p->reject($e);
        }
    }
}
