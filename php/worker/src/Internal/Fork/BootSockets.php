<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Fork;

use Ferry\Worker\Fork;

/**
 * @internal Finds the connections a zygote would hand to every worker it forks.
 *
 * A stream socket with a peer (a TCP connection, a connected unix socket) opened during the
 * boot is shared by every child after fork(): their requests and answers interleave on one
 * protocol stream. Listening sockets and datagram sockets do not have that problem, and a
 * library that reopens its socket after a fork says so through Fork::reopens().
 */
final class BootSockets
{
    /** @return list<int> the inodes of this process's open sockets */
    public static function inodes(): array
    {
        $inodes = [];
        foreach (@scandir('/proc/self/fd') ?: [] as $fd) {
            $target = @readlink("/proc/self/fd/$fd");
            if (\is_string($target) && preg_match('~^socket:\[(\d+)\]$~', $target, $m)) {
                $inodes[] = (int) $m[1];
            }
        }

        return array_values(array_unique($inodes));
    }

    /**
     * What to tell the user about the shared connections, or null when there are none.
     *
     * @param array<int> $own the zygote's own sockets
     * @param bool $mold a worker that was to become the next mold (pool.refork_after)
     */
    public static function describeShared(array $own, bool $mold = false): ?string
    {
        $found = [];
        foreach (self::inodes() as $inode) {
            if (\in_array($inode, $own, true) || Fork::isReopened($inode)) {
                continue;
            }
            $what = self::tcp($inode) ?? self::unix($inode);
            if ($what !== null) {
                $found[] = $what;
            }
        }
        if ($found === []) {
            return null;
        }

        $what = \count($found) === 1 ? 'a connection' : \count($found) . ' connections';
        if ($mold) {
            return "the worker chosen as the next mold holds $what: " . implode('; ', $found) . '. Every worker forked'
                . ' from it would share it; the generation keeps its zygote. Connections an app keeps between requests'
                . ' rule out pool.refork_after unless their library reopens them after a fork (Ferry\\Worker\\Fork::reopens())';
        }

        return "the application opened $what"
            . ' while booting, before the worker loop: ' . implode('; ', $found) . '. Every forked worker would share it,'
            . ' and their requests would interleave on one protocol stream. Open it in the first request that needs it'
            . ' (most clients connect lazily: do not call them at boot), close it before run(), or set pool.boot: exec'
            . ' (docs/config.md, "What an app may do at boot")';
    }

    /** "TCP 127.0.0.1:50312 -> 127.0.0.1:3306" for a TCP socket that is not listening */
    private static function tcp(int $inode): ?string
    {
        foreach (['/proc/self/net/tcp' => 4, '/proc/self/net/tcp6' => 6] as $file => $family) {
            foreach (@file($file, \FILE_IGNORE_NEW_LINES) ?: [] as $line) {
                $f = preg_split('~\s+~', trim($line));
                if (\count($f) < 10 || $f[9] !== (string) $inode) {
                    continue;
                }
                if ($f[3] === '0A') {
                    return null; // listening: each child accepting on it is harmless
                }

                return 'TCP ' . self::address($f[1], $family) . ' -> ' . self::address($f[2], $family);
            }
        }

        return null;
    }

    /** A connected unix stream socket */
    private static function unix(int $inode): ?string
    {
        foreach (@file('/proc/self/net/unix', \FILE_IGNORE_NEW_LINES) ?: [] as $line) {
            $f = preg_split('~\s+~', trim($line));
            if (\count($f) < 7 || $f[6] !== (string) $inode) {
                continue;
            }
            // Type 0001 is SOCK_STREAM, 0005 SOCK_SEQPACKET; state 03 is connected.
            if (!\in_array($f[4], ['0001', '0005'], true) || $f[5] !== '03') {
                return null;
            }
            // The client end's line names no path (only the bound end has one).
            return 'a connected unix socket (inode ' . $inode . ')';
        }

        return null;
    }

    private static function address(string $hex, int $family): string
    {
        [$ip, $port] = explode(':', $hex);
        $port = hexdec($port);
        if ($family === 4) {
            return long2ip((int) hexdec(implode('', array_reverse(str_split($ip, 2))))) . ":$port";
        }
        $bytes = '';
        foreach (str_split($ip, 8) as $word) {
            $bytes .= strrev((string) hex2bin($word));
        }
        $text = inet_ntop($bytes);

        return '[' . ($text === false ? $ip : $text) . "]:$port";
    }
}
