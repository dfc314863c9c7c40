<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fork;

/**
 * @internal Gives a forked worker its own log stream.
 *
 * A child inherits the zygote's stdout and stderr, so the server could not tell which worker
 * printed a line. The fork request carries a pipe of the child's own; dup2() puts it on
 * descriptors 1 and 2, where STDOUT, STDERR and the CLI's own output already write. PHP has
 * no dup2() of its own: FFI calls libc's. Without FFI the child keeps the zygote's streams,
 * and its lines are logged under the zygote's pid.
 */
final class Output
{
    /** libc's dup2(), bound once in the zygote; false without FFI */
    private static \FFI|false|null $libc = null;

    /** Binds dup2() before the forks, so that no worker parses the declaration again. */
    public static function prepare(): void
    {
        if (self::$libc === null) {
            try {
                self::$libc = \extension_loaded('ffi') ? \FFI::cdef('int dup2(int oldfd, int newfd);') : false;
            } catch (\Throwable) {
                self::$libc = false; // ffi.enable=false: the zygote's streams stay, as documented above
            }
        }
    }

    /** @param resource $pipe */
    public static function redirect($pipe): void
    {
        self::prepare();
        $fd = self::$libc !== false ? self::descriptor($pipe) : null;
        if ($fd !== null) {
            self::$libc->dup2($fd, 1);
            self::$libc->dup2($fd, 2);
        }
        fclose($pipe);
    }

    /** @param resource $stream */
    private static function descriptor($stream): ?int
    {
        $stat = fstat($stream);
        if (!\is_array($stat)) {
            return null;
        }
        foreach (@scandir('/proc/self/fd') ?: [] as $fd) {
            if ($fd === '.' || $fd === '..') {
                continue;
            }
            $target = @stat("/proc/self/fd/$fd");
            if (\is_array($target) && $target['ino'] === $stat['ino'] && $target['dev'] === $stat['dev'] && (int) $fd > 2) {
                return (int) $fd;
            }
        }

        return null;
    }
}
