<?php

declare(strict_types=1);

namespace Ferry\Tarantool\Protocol;

use Ferry\Tarantool\Exception\ProtocolException;

/** The 128-byte banner a Tarantool instance sends on accept: version line + base64 salt line. */
final class Greeting
{
    public const SIZE = 128;

    private function __construct(
        public readonly string $version,
        public readonly string $instanceUuid,
        public readonly string $salt,
    ) {
    }

    public static function parse(string $bytes): self
    {
        if (\strlen($bytes) !== self::SIZE) {
            throw new ProtocolException(\sprintf('Greeting must be %d bytes, got %d', self::SIZE, \strlen($bytes)));
        }
        $line1 = \rtrim(\substr($bytes, 0, 64));
        if (!\preg_match('~^Tarantool (\S+) \((Binary)\)\s*(\S*)~', $line1, $m)) {
            throw new ProtocolException('Not a Tarantool binary-protocol greeting: ' . \json_encode(\substr($line1, 0, 64)));
        }
        $salt = \base64_decode(\trim(\substr($bytes, 64, 64)), true);
        if ($salt === false || \strlen($salt) < 20) {
            throw new ProtocolException('Greeting carries no valid base64 salt of at least 20 bytes');
        }
        return new self($m[1], $m[3], \substr($salt, 0, 20));
    }

    /** chap-sha1: SHA1(pw) XOR SHA1(salt20 . SHA1(SHA1(pw))). */
    public function scramble(string $password): string
    {
        $step1 = \sha1($password, true);
        $step2 = \sha1($step1, true);
        $step3 = \sha1($this->salt . $step2, true);
        return $step1 ^ $step3;
    }
}
