<?php

declare(strict_types=1);

namespace Ferry\Worker;

/**
 * What a library tells the fork-server (pool.boot: fork) about the sockets it opens.
 *
 * Under pool.boot: fork, the server boots the app once in a zygote and forks every worker
 * from it. A socket the app opened while booting would be shared by every worker: two
 * processes writing one MySQL or Redis protocol stream corrupt it. So the zygote refuses
 * to fork while a boot-time socket is open, naming it, unless its owner declared here that
 * it never uses the socket in another process than the one that opened it (it notices
 * getmypid() changed, drops its copy without writing to it and connects again).
 *
 * Libraries call this only when the class exists, so they do not depend on php/worker:
 *
 *     if (\class_exists(\Ferry\Worker\Fork::class)) { \Ferry\Worker\Fork::reopens($stream); }
 */
final class Fork
{
    /** @var array<int, true> socket inodes, as fstat() gives them */
    private static array $reopened = [];

    /**
     * Declares that $stream, a socket, is reopened by its owner in a forked child.
     *
     * @param resource $stream
     */
    public static function reopens($stream): void
    {
        $stat = \is_resource($stream) ? @fstat($stream) : false;
        if (\is_array($stat) && $stat['ino'] > 0) {
            self::$reopened[$stat['ino']] = true;
        }
    }

    /** @internal for the zygote: whether the socket with this inode was declared. */
    public static function isReopened(int $inode): bool
    {
        return isset(self::$reopened[$inode]);
    }
}
