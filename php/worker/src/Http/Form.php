<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

/**
 * Rebuilds $_POST / $_FILES shaped arrays from the flat pairs the server sends for
 * multipart bodies.
 *
 * Both go through parse_str(), the same C code PHP uses for form fields, so nested names
 * (a[b][], a[]), name mangling ("a.b" -> "a_b") and max_input_vars / max_input_nesting_level
 * behave exactly as under PHP-FPM.
 */
final class Form
{
    private const FILE_KEYS = ['name', 'full_path', 'type', 'tmp_name', 'error', 'size'];

    /**
     * @param list<array{0: string, 1: string}> $pairs [name, value]
     * @return array<string|int, mixed>
     */
    public static function fields(array $pairs): array
    {
        if ($pairs === []) {
            return [];
        }
        $query = '';
        foreach ($pairs as [$name, $value]) {
            $query .= '&' . urlencode((string) $name) . '=' . urlencode((string) $value);
        }
        parse_str(substr($query, 1), $fields);

        return $fields;
    }

    /**
     * @param list<array{0: string, 1: string, 2: string, 3: string, 4: int, 5: int}> $uploads
     *        [field, file name as the client sent it, client media type, temp path, UPLOAD_ERR_*, size]
     * @return array<string, array<string, mixed>> $_FILES shape: field => [name, full_path, type, tmp_name, error, size],
     *         with nested field names nesting below each of those keys as PHP does
     */
    public static function files(array $uploads): array
    {
        if ($uploads === []) {
            return [];
        }
        $query = '';
        foreach ($uploads as $upload) {
            [$field, $client, $type, $tmp, $error, $size] = $upload + ['', '', '', '', UPLOAD_ERR_NO_FILE, 0];
            $field = (string) $field;
            $client = (string) $client;
            if ((int) $error === UPLOAD_ERR_NO_FILE) {
                // An empty file input: PHP reports every attribute empty, whatever the part said.
                $client = $type = $tmp = '';
                $size = 0;
            }
            // PHP places the attribute key right after the base name: "doc[a][]" -> doc[name][a][].
            $bracket = strpos($field, '[');
            $base = $bracket === false || $bracket === 0 ? $field : substr($field, 0, $bracket);
            $rest = $bracket === false || $bracket === 0 ? '' : substr($field, $bracket);
            $values = [self::basename($client), $client, $type, $tmp, $error, $size];
            foreach (self::FILE_KEYS as $i => $key) {
                $query .= '&' . urlencode($base . '[' . $key . ']' . $rest) . '=' . urlencode((string) $values[$i]);
            }
        }
        parse_str(substr($query, 1), $files);
        foreach ($files as &$file) {
            if (isset($file['error'])) {
                $file['error'] = self::integers($file['error']);
            }
            if (isset($file['size'])) {
                $file['size'] = self::integers($file['size']);
            }
        }
        unset($file);

        return $files;
    }

    /**
     * PHP's rule for an upload's name: whatever follows the last "/" or "\\" (browsers
     * send relative paths for folder uploads, old ones the whole client path).
     */
    public static function basename(string $name): string
    {
        $slash = strrpos($name, '/');
        $backslash = strrpos($name, '\\');
        $cut = max($slash === false ? -1 : $slash, $backslash === false ? -1 : $backslash);

        return $cut < 0 ? $name : substr($name, $cut + 1);
    }

    /**
     * @param list<array<int, mixed>> $uploads
     * @return array<string, true> temp paths of the files actually received
     */
    public static function tempPaths(array $uploads): array
    {
        $paths = [];
        foreach ($uploads as $upload) {
            if (($upload[4] ?? UPLOAD_ERR_NO_FILE) === UPLOAD_ERR_OK && ($upload[3] ?? '') !== '') {
                $paths[(string) $upload[3]] = true;
            }
        }

        return $paths;
    }

    /**
     * Moves a file like move_uploaded_file(): rename, else copy and unlink (another
     * filesystem), then the permissions a new file would get under the current umask.
     */
    public static function move(string $from, string $to): bool
    {
        if (!@rename($from, $to)) {
            if (!@copy($from, $to)) {
                return false;
            }
            @unlink($from);
        }
        @chmod($to, 0666 & ~umask());

        return true;
    }

    private static function integers(mixed $value): mixed
    {
        if (\is_array($value)) {
            foreach ($value as $key => $item) {
                $value[$key] = self::integers($item);
            }

            return $value;
        }

        return (int) $value;
    }

    /**
     * $_REQUEST as PHP builds it: the request_order (else variables_order) letters G, P, C
     * in order, later ones winning, arrays under the same key merged recursively.
     *
     * @param array<string|int, mixed> $get
     * @param array<string|int, mixed> $post
     * @param array<string|int, mixed> $cookie
     * @return array<string|int, mixed>
     */
    public static function requestVariables(array $get, array $post, array $cookie, ?string $order = null): array
    {
        $order ??= (string) (ini_get('request_order') ?: ini_get('variables_order'));
        $request = [];
        foreach (str_split(strtoupper($order)) as $letter) {
            $source = match ($letter) {
                'G' => $get,
                'P' => $post,
                'C' => $cookie,
                default => [],
            };
            if ($source !== []) {
                $request = $request === [] ? $source : array_replace_recursive($request, $source);
            }
        }

        return $request;
    }
}
