<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;

/**
 * @internal A PHP fatal error (memory exhausted, an error thrown where nothing catches it)
 * ends the worker process. Without an answer the server could only say that the worker
 * vanished: a 502, which tells proxies and monitors that the infrastructure failed. FPM
 * answers 500, since the application failed; this shutdown function does the same: it
 * asks the server to retire the worker (so no new job comes to it), then fails every job
 * in progress with an ERROR frame, which the server answers 500, or, for a streamed answer
 * whose head is out, cuts short, as for an exception thrown while streaming. PHP has
 * written the fatal message to STDERR, which the server logs: the frame does not repeat it.
 *
 * exit(), kill -9 or a segfault leave no fatal error behind: the worker vanishes, 502.
 */
final class FatalAnswer
{
    private const FATAL = E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR;
    /** freed first thing at a fatal error: an exhausted memory_limit leaves no room to answer in */
    private const RESERVE = 1 << 16;
    /** room given above the memory in use to write the answers */
    private const HEADROOM = 8 << 20;

    private static ?WorkerSession $session = null;
    private static string $reserve = '';

    public static function register(WorkerSession $session): void
    {
        if (self::$session === null) {
            register_shutdown_function(static function (): void {
                self::shutdown();
            });
            self::$reserve = str_repeat("\0", self::RESERVE);
        }
        self::$session = $session;
    }

    private static function shutdown(): void
    {
        $error = error_get_last();
        $session = self::$session;
        if ($error === null || ($error['type'] & self::FATAL) === 0 || $session === null) {
            return;
        }
        self::$reserve = '';
        $limit = (string) ini_get('memory_limit');
        if ($limit !== '-1' && $limit !== '') {
            @ini_set('memory_limit', (string) (memory_get_usage(true) + self::HEADROOM));
        }
        $ids = self::inProgress($session);
        if ($ids === []) {
            return; // between jobs: the server sees the worker go, with nothing held
        }
        if ($session->direct && $session->directSink === null && \function_exists('Ferry\Ext\direct_answer')) {
            // Direct mode, a request ext/ferry's loop was running: the error goes to its client.
            $session->directSink = static function (string $bytes) use ($session): void {
                $control = '';
                \Ferry\Ext\direct_answer($bytes, $control);
                if ($control !== '') {
                    $session->relay->write($control);
                }
            };
        }
        try {
            $session->stop();
            foreach ($ids as $id) {
                $session->queue(FrameCodec::encode(Frame::ERROR, [0, $id], 'PHP fatal error (its message is in the log): the worker exits'));
            }
            $session->flush();
        } catch (\Throwable) {
            // The relay is gone: the server knows already.
        }
    }

    /**
     * The ids of the jobs running when the process ended: several in Fiber mode (ext/ferry's
     * Fibers' too); for a sequential worker, the one ext/ferry's loop runs, known only from
     * the session's $running.
     *
     * @return list<int>
     */
    private static function inProgress(WorkerSession $session): array
    {
        $ids = [];
        foreach ($session->capture->running() as $job) {
            $ids[] = $job->payload->id;
        }
        if (!$session->fibers) {
            return $session->running === null ? $ids : [$session->running];
        }
        foreach ($session->fiberRunning as $id) {
            if ($id !== null) {
                $ids[] = $id;
            }
        }

        return array_values(array_unique($ids));
    }
}
