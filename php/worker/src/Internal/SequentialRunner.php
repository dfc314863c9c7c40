<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Internal\Fork\Mold;
use Ferry\Worker\Internal\Native\DirectLoop;
use Ferry\Worker\Internal\Native\NativeLoop;

/**
 * @internal The sequential worker's loop (Worker::run() without Fibers): one job at a time,
 * each answer written as soon as its job is done. With ext/ferry's loop ($native), the
 * extension serves the usual jobs whenever this loop would read the relay, and hands
 * back what it does not serve. In direct mode ($direct) it waits in the extension's event
 * loop instead, which serves HTTP clients until the relay has bytes for this loop.
 */
final class SequentialRunner
{
    public function __construct(
        private readonly WorkerSession $session,
        private readonly ?NativeLoop $native = null,
        private readonly ?DirectLoop $direct = null,
    ) {
    }

    public function run(callable $handler): void
    {
        $session = $this->session;
        $capture = $session->capture;
        $session->leaks?->serve($handler, $capture);
        // The leak watch checks between requests, which the extension's loop does not stop for.
        $native = $session->leaks === null ? $this->native : null;
        $jobs = $session->jobs;
        while (true) {
            while (!$jobs->isEmpty()) {
                $job = JobFrames::job($jobs->dequeue(), $capture);
                if (\is_string($job)) {
                    $session->queue($job);
                    continue;
                }
                // A pong or an error queued meanwhile must not wait for this job.
                if ($session->outbox !== '') {
                    $session->flush();
                }
                $session->finish($job, $session->execute($job, $handler, $capture));
            }
            $session->flush();
            if ($session->stopping || $session->closed) {
                // Its clients' requests in flight are answered, idle connections closed.
                while ($this->direct !== null && $this->direct->serve(true) !== DirectLoop::DRAINED) {
                    $session->flush();
                }

                return;
            }
            // A direct-mode worker holds client connections, which no mold may hand down.
            if ($session->moldSocket !== null && $this->direct === null && Mold::fork($session)) {
                // A worker forked from the new mold: the same loop, on a relay of its own.
                $this->native?->rebind();
                $session->handshake();
                continue;
            }
            if ($this->direct !== null && $session->parser->buffered() === 0 && $this->direct->serve() !== DirectLoop::RELAY) {
                continue;
            }
            if ($native !== null && $native->serve($session->parser->take())) {
                continue;
            }
            $session->receive();
        }
    }
}
