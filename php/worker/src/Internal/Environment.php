<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

/**
 * @internal What the server passes its workers through the environment.
 */
final class Environment
{
    public const TOKEN = 'FERRY_RELAY_TOKEN';
    public const RELAY = 'FERRY_RELAY';
    public const SPOOL_DIR = 'FERRY_SPOOL_DIR';

    private static ?string $token = null;
    private static bool $tokenTaken = false;
    private static ?string $relay = null;

    /**
     * Where the relay is (FERRY_RELAY), read once and then removed from the environment:
     * a program the application starts (`php bin/console ...`) must not take itself for
     * a worker of this server.
     */
    public static function takeRelay(): string
    {
        if (self::$relay === null) {
            self::$relay = self::take(self::RELAY) ?? '';
        }

        return self::$relay;
    }

    /**
     * The secret the worker proves itself with in the handshake. It is read once and then
     * removed from the environment ($_ENV, $_SERVER, getenv() and the environment child
     * processes inherit), so application code and the programs it runs never see it.
     */
    public static function takeRelayToken(): ?string
    {
        if (!self::$tokenTaken) {
            self::$tokenTaken = true;
            self::$token = self::take(self::TOKEN);
        }

        return self::$token;
    }

    private static function take(string $name): ?string
    {
        $value = getenv($name);
        if ($value === false) {
            $value = $_SERVER[$name] ?? $_ENV[$name] ?? '';
        }
        putenv($name);
        unset($_ENV[$name], $_SERVER[$name]);

        return \is_string($value) && $value !== '' ? $value : null;
    }

    /**
     * Where to write a file the server is to read and delete (spooled output): the
     * directory of this worker that the server names in FERRY_SPOOL_DIR and removes once
     * the worker has exited, so that a worker killed mid-request (exec_ttl, a reload's
     * destroy_timeout) leaves nothing behind; the system temp dir for a worker run
     * outside Ferry, or one whose directory has gone.
     */
    public static function spoolDir(): string
    {
        $dir = getenv(self::SPOOL_DIR);

        return \is_string($dir) && $dir !== '' && is_dir($dir) ? $dir : sys_get_temp_dir();
    }

    public static function int(string $name, int $default): int
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            return $default;
        }
        if (preg_match('/\A\d+\z/', $value) !== 1) { // no ctype: workers may run with php -n
            throw new \InvalidArgumentException("$name must be a positive integer, got \"$value\"");
        }

        return (int) $value;
    }
}
