<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Async;

/** EventLoop over stream_select(); timers are few here, so a linear scan beats a heap. */
final class StreamSelectLoop implements EventLoop
{
    /** @var array<string, resource> */
    private array $readStreams = [];
    /** @var array<string, \Closure> */
    private array $readCallbacks = [];
    /** @var array<string, resource> */
    private array $writeStreams = [];
    /** @var array<string, \Closure> */
    private array $writeCallbacks = [];
    /** @var array<string, float> */
    private array $timerAt = [];
    /** @var array<string, \Closure> */
    private array $timerCallbacks = [];
    /** @var list<\Closure> */
    private array $deferred = [];
    private int $nextId = 0;
    private bool $running = false;
    private bool $stopping = false;

    public function onReadable($stream, \Closure $callback): string
    {
        $id = 'r' . ++$this->nextId;
        $this->readStreams[$id] = $stream;
        $this->readCallbacks[$id] = $callback;
        return $id;
    }

    public function onWritable($stream, \Closure $callback): string
    {
        $id = 'w' . ++$this->nextId;
        $this->writeStreams[$id] = $stream;
        $this->writeCallbacks[$id] = $callback;
        return $id;
    }

    public function delay(float $seconds, \Closure $callback): string
    {
        $id = 't' . ++$this->nextId;
        $this->timerAt[$id] = \microtime(true) + \max(0.0, $seconds);
        $this->timerCallbacks[$id] = $callback;
        return $id;
    }

    public function defer(\Closure $callback): void
    {
        $this->deferred[] = $callback;
    }

    public function cancel(string $id): void
    {
        unset(
            $this->readStreams[$id],
            $this->readCallbacks[$id],
            $this->writeStreams[$id],
            $this->writeCallbacks[$id],
            $this->timerAt[$id],
            $this->timerCallbacks[$id],
        );
    }

    public function isRunning(): bool
    {
        return $this->running;
    }

    public function stop(): void
    {
        $this->stopping = true;
    }

    public function run(): void
    {
        if ($this->running) {
            throw new \LogicException('The event loop is already running');
        }
        if (\Fiber::getCurrent() !== null) {
            throw new \LogicException('Run the event loop outside of any Fiber');
        }
        $this->running = true;
        $this->stopping = false;
        try {
            while (!$this->stopping) {
                if ($this->deferred !== []) {
                    $batch = $this->deferred;
                    $this->deferred = [];
                    foreach ($batch as $cb) {
                        $cb();
                    }
                    if ($this->stopping) {
                        break;
                    }
                }
                if ($this->readStreams === [] && $this->writeStreams === [] && $this->timerAt === []) {
                    if ($this->deferred === []) {
                        break;
                    }
                    continue;
                }
                // Pending deferred callbacks must not wait for I/O, only poll it.
                $this->tick($this->deferred !== []);
            }
        } finally {
            $this->running = false;
            $this->stopping = false;
        }
    }

    private function tick(bool $poll): void
    {
        $timeout = $poll ? 0.0 : null;
        if (!$poll && $this->timerAt !== []) {
            $timeout = \max(0.0, \min($this->timerAt) - \microtime(true));
        }
        if ($this->readStreams !== [] || $this->writeStreams !== []) {
            $r = $this->readStreams;
            $w = $this->writeStreams;
            $e = null;
            $sec = $timeout === null ? null : (int) $timeout;
            $usec = $timeout === null ? null : (int) (($timeout - (int) $timeout) * 1e6);
            $n = @\stream_select($r, $w, $e, $sec, $usec);
            if ($n === false) {
                // EINTR (a signal) or every stream closed under us: callbacks will see EOF.
                $r = \array_filter($this->readStreams, static fn ($s) => !\is_resource($s));
                $w = [];
            }
            foreach ($r as $id => $stream) {
                // A previous callback of this tick may have cancelled the watcher.
                if (isset($this->readCallbacks[$id])) {
                    ($this->readCallbacks[$id])($stream);
                }
            }
            foreach ($w as $id => $stream) {
                if (isset($this->writeCallbacks[$id])) {
                    ($this->writeCallbacks[$id])($stream);
                }
            }
        } elseif ($timeout > 0) {
            \usleep((int) ($timeout * 1e6));
        }
        if ($this->timerAt !== []) {
            $now = \microtime(true);
            foreach ($this->timerAt as $id => $at) {
                if ($at <= $now && isset($this->timerCallbacks[$id])) {
                    $cb = $this->timerCallbacks[$id];
                    unset($this->timerAt[$id], $this->timerCallbacks[$id]);
                    $cb();
                }
            }
        }
    }
}
