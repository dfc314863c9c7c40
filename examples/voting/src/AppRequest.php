<?php

declare(strict_types=1);

namespace Voting;

/** What the app needs from an HTTP request, whichever server (Ferry or FPM) received it. */
final class AppRequest
{
    /** @param array<string, mixed> $form the urlencoded POST fields */
    public function __construct(
        public readonly string $method,
        public readonly string $path,
        public readonly ?string $voterCookie,
        public readonly string $ip,
        public readonly string $userAgent,
        public readonly array $form = [],
        public readonly bool $wantsJson = false,
    ) {
    }

    /** "127.0.0.1:5678" / "[::1]:5678" / "127.0.0.1" -> the address without the port. */
    public static function hostOf(string $address): string
    {
        if ($address === '') {
            return '';
        }
        if ($address[0] === '[') {
            $end = strpos($address, ']');
            return $end === false ? $address : substr($address, 1, $end - 1);
        }
        $colon = strrpos($address, ':');
        // More than one colon without brackets: a bare IPv6 address, no port.
        return $colon === false || strpos($address, ':') !== $colon ? $address : substr($address, 0, $colon);
    }
}
