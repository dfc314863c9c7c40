<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fork;

use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Relay\StreamRelay;

/**
 * @internal A refork (pool.refork_after), in the worker the server chose: between two jobs
 * it forks the generation's next mold, which keeps everything this worker has warmed (code
 * loaded lazily, caches, the JIT's buffer) and serves fork requests as the zygote did. The
 * worker itself goes on serving.
 *
 * The mold is forked twice over, so that it is nobody's child here: this worker reaps the
 * intermediate process at once and never has a mold to wait for.
 */
final class Mold
{
    /**
     * Returns false in this worker, which goes on; true in a worker forked from the new mold,
     * which must take its relay's streams and handshake before it reads a job.
     */
    public static function fork(WorkerSession $session): bool
    {
        $socket = $session->moldSocket;
        $session->moldSocket = null;
        if ($socket === null || !$session->relay instanceof StreamRelay || !\function_exists('pcntl_fork')) {
            return false;
        }
        $pid = pcntl_fork();
        if ($pid > 0) {
            pcntl_waitpid($pid, $status);

            return false;
        }
        if ($pid < 0) {
            error_log('ferry: refork: cannot fork: ' . pcntl_strerror(pcntl_get_last_error()));

            return false;
        }
        // The intermediate process: it ends at once, without PHP's shutdown, whose destructors
        // would act on the worker's objects (a connection's goodbye on a shared socket).
        if (pcntl_fork() !== 0) {
            posix_kill(getmypid(), \SIGKILL);
        }
        $session->reborn();
        Zygote::serve($session->relay, $socket, $session->token(), true);

        return true;
    }
}
