<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

/**
 * @internal What the server passes its workers through the environment.
 */
final class Environment
{
    public const TOKEN = 'FERRY_RELAY_TOKEN';

    private static ?string $token = null;
    private static bool $tokenTaken = false;

    /**
     * The secret the worker proves itself with in the handshake. It is read once and then
     * removed from the environment ($_ENV, $_SERVER, getenv() and the environment child
     * processes inherit), so application code and the programs it runs never see it.
     */
    public static function takeRelayToken(): ?string
    {
        if (!self::$tokenTaken) {
            self::$tokenTaken = true;
            $value = getenv(self::TOKEN);
            if ($value === false) {
                $value = $_SERVER[self::TOKEN] ?? $_ENV[self::TOKEN] ?? '';
            }
            self::$token = \is_string($value) && $value !== '' ? $value : null;
            putenv(self::TOKEN);
            unset($_ENV[self::TOKEN], $_SERVER[self::TOKEN]);
        }

        return self::$token;
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
