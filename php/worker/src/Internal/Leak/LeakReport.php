<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal\Leak;

/**
 * @internal The wording of leak watch findings, and what it takes to write them: which
 * requests to blame, what the new descriptors point to. Only runs when something is found.
 *
 * Messages hold "{who}" where the request (or the list of suspects) goes.
 */
final class LeakReport
{
    private const SUSPECTS = 4;

    /**
     * The requests a change happened during: one when the window holds one request.
     *
     * @param list<string> $window job contexts
     * @return array{label: string, method: ?string, path: ?string, exact: bool}
     */
    public static function suspects(array $window, ?int $since = null): array
    {
        $since ??= \count($window);
        $labels = [];
        $first = null;
        foreach ($window as $context) {
            $request = self::request($context);
            $first ??= $request;
            $labels[$request[0] === null ? 'a job' : "$request[0] $request[1]"] = true;
        }
        if (\count($labels) <= 1) {
            // Every suspect is the same route: that is the one.
            return ['label' => (string) array_key_first($labels ?: ['a request' => true]), 'method' => $first[0] ?? null, 'path' => $first[1] ?? null, 'exact' => $since === 1];
        }
        $names = array_keys($labels);
        $label = 'one of ' . implode(', ', \array_slice($names, 0, self::SUSPECTS));
        if (\count($names) > self::SUSPECTS) {
            $label .= ' and ' . (\count($names) - self::SUSPECTS) . ' more';
        }

        $seen = $since > \count($window) ? ', the last ' . \count($window) . ' of them named' : '';

        return ['label' => $label . " (the $since requests since the previous check$seen)", 'method' => null, 'path' => null, 'exact' => false];
    }

    /** @return array{?string, ?string} method and path of an HTTP job's context */
    private static function request(string $context): array
    {
        if ($context === '' || $context[0] !== 'a') {
            return [null, null];
        }
        $c = @unserialize($context, ['allowed_classes' => false]);

        return \is_array($c) && \is_string($c['method'] ?? null) && \is_string($c['path'] ?? null) ? [$c['method'], $c['path']] : [null, null];
    }

    /** @param array<string, string> $values the snapshot's signatures */
    public static function changed(string $key, string $was, string $now, array $values): string
    {
        [$kind, $name] = explode('|', $key, 2);
        $from = LeakSnapshot::readable($was);
        $to = LeakSnapshot::readable($now);

        return match ($kind) {
            'ini' => "{who} changed ini $name ($from → $to) and did not restore it",
            'timezone' => "{who} changed the default timezone ($from → $to) and did not restore it",
            'locale', 'cwd', 'umask' => "{who} changed the $name ($from → $to) and did not restore it",
            'output_buffer' => (int) $now > (int) $was
                ? '{who} left ' . self::count((int) $now - (int) $was, 'output buffer') . ' open'
                : '{who} closed ' . self::count((int) $was - (int) $now, 'output buffer') . ' it had not opened',
            'global' => "{who} set the global $name and did not unset it (now $to)",
            'shared' => "$name (watched) changed between requests ($from after warm-up, $to now); first by {who}",
            default => "$name changed ($from → $to); first by {who}",
        };
    }

    /**
     * One watched object (subject "shared|name") whose properties differ from the baseline.
     *
     * @param array<string, array{string, string, string}> $properties name => [after warm-up, now, key]
     * @param array<string, string> $values the snapshot's signatures
     */
    public static function sharedObject(string $object, array $properties, array $values): string
    {
        $name = substr($object, \strlen('shared|'));
        $class = LeakSnapshot::readable($values[$object] ?? '');
        $parts = [];
        foreach (\array_slice($properties, 0, 3, true) as $property => [$was, $now]) {
            $parts[] = "property $property (" . LeakSnapshot::readable($was) . ' after warm-up, ' . LeakSnapshot::readable($now) . ' now)';
        }
        $more = \count($properties) - \count($parts);

        return ($class === '' ? $name : "$name (shared instance, $class)") . ' changed between requests: '
            . implode(', ', $parts) . ($more > 0 ? " and $more more" : '') . '; first by {who}';
    }

    public static function changedBetween(string $key, string $now): string
    {
        [$kind, $name] = explode('|', $key, 2);
        $what = match ($kind) {
            'static' => $name,
            'global' => "the global $name",
            default => "$name (watched)",
        };

        return "$what changed between requests (now " . LeakSnapshot::readable($now) . '); first by {who}';
    }

    public static function handler(string $key, string $was, string $now, bool $grows): string
    {
        $kind = $key === 'error_handler|error handler' ? 'error' : 'exception';
        $fn = $kind === 'error' ? 'set_error_handler' : 'set_exception_handler';
        $current = LeakSnapshot::readable($now);
        if ($grows) {
            return "the $kind handler stack grows: {who} calls $fn() (now $current) and never restores the previous handler";
        }

        return "{who} set an $kind handler ($current) and did not restore the previous one (" . LeakSnapshot::readable($was) . ')';
    }

    /**
     * @param array<string, string> $baseFds the descriptors at the baseline (see fds())
     * @param ?string $signature the subject's value, when it has one (a string grows in bytes)
     */
    public static function growth(string $key, int $now, float $perRequest, array $baseFds, ?string $signature): string
    {
        [$kind, $name] = explode('|', $key, 2);
        $counted = $kind === 'fd' || $kind === 'classes' || $kind === 'functions' || $key === 'global|globals';
        $bytes = $kind === 'memory' || ($signature !== null && ($signature[0] === '"' || preg_match('/^\d+ bytes #/', $signature) === 1));
        $subject = $kind === 'global' && !$counted ? "the global $name" : $name;
        $rate = self::rate($perRequest, $counted ? '' : ($bytes ? 'byte' : 'element'), $bytes && $kind === 'memory');
        $level = ($kind === 'memory' ? self::bytes($now) : number_format($now) . ($counted || $bytes ? '' : ' elements')) . ' now';
        if ($kind === 'fd') {
            $level .= ': ' . self::describeFds(array_diff_assoc(self::fds(), $baseFds));
        }

        return "$subject " . ($counted ? 'grow' : 'grows') . " by $rate ($level); first by {who}";
    }

    private static function rate(float $perRequest, string $unit, bool $memory): string
    {
        if ($memory) {
            return self::bytes((int) round($perRequest)) . ' per request';
        }
        if ($perRequest >= 0.95) {
            $n = round($perRequest, $perRequest < 10 ? 1 : 0);
            $text = rtrim(rtrim(number_format($n, 1), '0'), '.');

            return ($unit === '' ? $text : "$text $unit" . ($text === '1' ? '' : 's')) . ' per request';
        }

        return '1' . ($unit === '' ? '' : " $unit") . ' every ' . number_format(round(1 / max($perRequest, 1e-9))) . ' requests';
    }

    private static function bytes(int $n): string
    {
        return match (true) {
            $n >= 1 << 20 => round($n / (1 << 20), 1) . ' MiB',
            $n >= 1 << 10 => round($n / (1 << 10), 1) . ' KiB',
            default => $n . ' bytes',
        };
    }

    private static function count(int $n, string $what): string
    {
        return $n . ' ' . $what . ($n === 1 ? '' : 's');
    }

    /** @return array<string, string> the process's open descriptors and what they point to */
    public static function fds(): array
    {
        $fds = [];
        foreach (@scandir('/proc/self/fd') ?: [] as $fd) {
            if ($fd !== '.' && $fd !== '..' && ($target = @readlink("/proc/self/fd/$fd")) !== false) {
                $fds[$fd] = $target;
            }
        }

        return $fds;
    }

    /**
     * What the new descriptors point to, grouped: "sockets to 127.0.0.1:6379", a file's path.
     *
     * @param array<string, string> $fds descriptor => target
     */
    private static function describeFds(array $fds): string
    {
        $remote = null;
        $groups = [];
        foreach ($fds as $target) {
            if (preg_match('/^socket:\[(\d+)\]$/', $target, $m)) {
                $remote ??= self::tcpPeers();
                $target = isset($remote[$m[1]]) ? 'sockets to ' . $remote[$m[1]] : 'sockets';
            } elseif (str_starts_with($target, 'pipe:')) {
                $target = 'pipes';
            }
            $groups[$target] = ($groups[$target] ?? 0) + 1;
        }
        arsort($groups);
        $parts = [];
        foreach (\array_slice($groups, 0, 3, true) as $target => $n) {
            $parts[] = $n > 1 ? "$n $target" : $target;
        }

        return $parts === [] ? 'closed again' : implode(', ', $parts);
    }

    /** @return array<string, string> socket inode => remote "address:port" (IPv4 TCP) */
    private static function tcpPeers(): array
    {
        $peers = [];
        foreach (@file('/proc/self/net/tcp', FILE_IGNORE_NEW_LINES) ?: [] as $line) {
            $f = preg_split('/\s+/', trim($line));
            if (\count($f) < 10 || !preg_match('/^([0-9A-F]{8}):([0-9A-F]{4})$/', $f[2], $m)) {
                continue;
            }
            $ip = implode('.', array_reverse(array_map('hexdec', str_split($m[1], 2))));
            $peers[$f[9]] = $ip . ':' . hexdec($m[2]);
        }

        return $peers;
    }
}
