<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Native;

use Ferry\Worker\Internal\WorkerSession;
use Ferry\Worker\Worker;

/**
 * @internal Whether the loaded ext/ferry and this php/worker agree on the worker contract
 * (WorkerSession::CONTRACT_VERSION against Ferry\Ext\CONTRACT_VERSION).
 *
 * When they do not (an extension built from another Ferry release), ext/ferry's worker
 * loops stay off and the PHP loops serve every request: the worker keeps working, only
 * slower, and says so once in the log. ext/ferry itself refuses a session of another
 * version with an Error naming both, should anything call it regardless.
 */
final class NativeContract
{
    private static ?bool $agreed = null;

    public static function agreed(): bool
    {
        if (self::$agreed === null) {
            $ext = \defined('Ferry\Ext\CONTRACT_VERSION') ? \constant('Ferry\Ext\CONTRACT_VERSION') : null;
            self::$agreed = $ext === WorkerSession::CONTRACT_VERSION;
            if (!self::$agreed) {
                Worker::log('warning: ' . self::mismatch(\is_int($ext) ? $ext : null, WorkerSession::CONTRACT_VERSION));
            }
        }

        return self::$agreed;
    }

    /** What the log says when the versions differ ($ext null: an ext/ferry from before the contract). */
    public static function mismatch(?int $ext, int $sdk): string
    {
        return ($ext === null ? 'ext/ferry predates the worker contract' : "ext/ferry speaks worker contract version $ext")
            . ", php/worker version $sdk: ext/ferry's worker loop is off and PHP serves every request"
            . ' (slower, same answers); load the ext/ferry built from the same Ferry release as php/worker';
    }
}
