<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Connection;

use Ferry\Tarantool\Async\Loop;
use Ferry\Tarantool\Exception\ConnectionException;
use Ferry\Tarantool\Exception\ProtocolException;
use Ferry\Tarantool\Exception\ServerException;
use Ferry\Tarantool\Protocol\Iproto;
use Ferry\Tarantool\Protocol\Request;
use Ferry\Tarantool\Protocol\RequestFactory;
use Ferry\Tarantool\Protocol\Response;

/**
 * The blocking side of Connection: when nothing else is in flight and no Fiber can be
 * suspended, a request is written and its reply read in place, with no future or pending
 * table; SELECT by ids additionally skips the Request and Response objects.
 *
 * @internal used by Connection only; shares its state
 */
trait RoundTrip
{
    /**
     * SELECT by numeric ids. On an idle connection with no Fiber to suspend, it is written and
     * its reply read right here, without Request, future or Response objects: the common
     * synchronous case costs little more than a hand-written IPROTO loop. Otherwise it goes
     * the general way.
     * @param list<mixed> $key
     * @return list<list<mixed>> tuples
     */
    public function select(int $space, int $index, int $limit, int $offset, int $iterator, array $key): array
    {
        if ($this->owner !== \getmypid()) {
            $this->leaveInheritedSession();
        }
        $socket = $this->socket;
        if ($socket === null || $iterator < 0 || $iterator > 11) {
            return $this->handle(RequestFactory::select($space, $key, $index, $limit, $offset, $iterator))->body[Iproto::DATA] ?? [];
        }
        if ($this->pending !== [] || $this->wbuf !== '' || $this->rbuf !== '' || (\Fiber::getCurrent() !== null && Loop::get()->isRunning())) {
            // Pipelined with whatever else is in flight, still without a Request object.
            $sync = ++$this->sync;
            return $this->enqueue($sync, $this->encoder->selectFrame($sync, $space, $index, $limit, $offset, $iterator, $key), null)
                ->await()->body[Iproto::DATA] ?? [];
        }
        $o = $this->options;
        $sync = ++$this->sync;
        $frame = $this->encoder->selectFrame($sync, $space, $index, $limit, $offset, $iterator, $key);
        $deadline = \microtime(true) + $o->readTimeout;
        if ($socket->timeout !== $o->readTimeout) {
            $socket->setTimeout($o->readTimeout);
        }
        $start = $this->written;
        $this->queued += \strlen($frame);
        $n = @\fwrite($socket->stream, $frame);
        $this->written += (int) $n;
        if ($n !== \strlen($frame)) {
            try {
                $socket->write(\substr($frame, (int) $n), $o->writeTimeout, $o->display, $this->written);
            } catch (ConnectionException $e) {
                $e = $e->withRequestSent($this->written > $start);
                $this->disconnect($e);
                throw $e;
            }
        }
        $buf = (string) @\fread($socket->stream, 65536);
        // Usually the whole reply arrives in one read, with Tarantool's fixed-width header.
        if (\strlen($buf) > 28 && $buf[0] === "\xce" && \unpack('N', $buf, 1)[1] === \strlen($buf) - 5
            && \substr_compare($buf, "\x83\x00\xce\x00\x00\x00\x00\x01\xcf" . \pack('J', $sync) . "\x05\xce", 5, 19) === 0) {
            // Body {IPROTO_DATA: [tuples]}: decode just the tuple array.
            if ($buf[28] === "\x81" && $buf[29] === "\x30") {
                $rows = $this->codec->unpack(\substr($buf, 30));
                return \is_array($rows) ? $rows : [];
            }
            return $this->codec->unpack(\substr($buf, 28))[Iproto::DATA] ?? [];
        }
        return $this->exchange($sync, null, $buf, $deadline, $o->readTimeout)->body[Iproto::DATA] ?? [];
    }

    /** Blocking request/reply on an otherwise idle connection (see handle()). */
    private function roundTrip(Request $request): Response
    {
        if ($this->socket === null) {
            $this->connect();
        }
        $body = $request->body;
        $schemaVersion = 0;
        if ($request->usesNames()) {
            [$body, $schemaVersion] = $this->schema->resolve($body);
            if ($this->socket === null || $this->pending !== []) {
                return $this->send($request)->await();
            }
        }
        $o = $this->options;
        $sync = ++$this->sync;
        $frame = $this->encoder->frame($request->type, $sync, $schemaVersion, $body);
        $timeout = $request->timeout ?? $o->readTimeout;
        $deadline = \microtime(true) + $timeout;
        $start = $this->written;
        $this->queued += \strlen($frame);
        try {
            $this->socket->write($frame, $o->writeTimeout, $o->display, $this->written);
        } catch (ConnectionException $e) {
            // Part of a frame cannot execute, but it is reported maybe sent all the same:
            // only "nothing left the process" is a promise worth making.
            $e = $e->withRequestSent($this->written > $start);
            $this->disconnect($e);
            throw $e;
        }
        return $this->exchange($sync, $request->onPush ?? $this->onPush, $this->rbuf, $deadline, $timeout);
    }

    /**
     * Reads until the reply to $sync (already written) is complete, starting from the bytes in
     * $buf; pushes go to $onPush, replies to other syncs (dropped requests) are skipped.
     */
    private function exchange(int $sync, ?\Closure $onPush, string $buf, float $deadline, float $timeout): Response
    {
        $o = $this->options;
        $off = 0;
        try {
            while (true) {
                $f = FrameReader::next($buf, $off, \strlen($buf), $o->display);
                if ($f === null) {
                    $buf = ($off === 0 ? $buf : \substr($buf, $off)) . $this->socket->read($deadline - \microtime(true), 65536, $o->display, $timeout);
                    $off = 0;
                    continue;
                }
                if ($f[1] !== $sync) {
                    continue; // late reply of a request dropped earlier under the loop
                }
                if ($f[0] === Iproto::CHUNK) {
                    if ($onPush !== null) {
                        $onPush($f[3] === '' ? null : ($this->codec->unpack($f[3])[Iproto::DATA][0] ?? null), $sync);
                    }
                    continue;
                }
                $this->rbuf = $off === \strlen($buf) ? '' : \substr($buf, $off);
                return $this->reply($f[0], $sync, $f[2], $f[3]);
            }
        } catch (ConnectionException|ProtocolException $e) {
            $this->disconnect($e);
            throw $e;
        } catch (ServerException $e) {
            throw $e;
        } catch (\Throwable $e) {
            // A push callback failed mid-reply: the rest of the reply is unread, drop the session.
            $this->disconnect(new ConnectionException('Closed after a push callback failed', $o->display, true, $e));
            throw $e;
        }
    }
}
