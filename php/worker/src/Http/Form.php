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
     *        [field, client file name, client media type, temp path, UPLOAD_ERR_*, size]
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
            // PHP places the attribute key right after the base name: "doc[a][]" -> doc[name][a][].
            $bracket = strpos($field, '[');
            $base = $bracket === false || $bracket === 0 ? $field : substr($field, 0, $bracket);
            $rest = $bracket === false || $bracket === 0 ? '' : substr($field, $bracket);
            $values = [$client, $client, $type, $tmp, $error, $size];
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
}
