<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Form;
use PHPUnit\Framework\TestCase;

/**
 * Compares Form with PHP's own multipart parsing: the same fields are posted to PHP's
 * built-in web server (real $_POST / $_FILES) and given to Form as the pairs Ferry's
 * gateway would send.
 */
final class FormReferenceTest extends TestCase
{
    /** @var list<array{string, string}> */
    private const FIELDS = [
        ['title', 'Hello world'],
        ['tags[]', 'a'],
        ['tags[]', 'b'],
        ['user[name]', 'Ann'],
        ['user[roles][]', 'admin'],
        ['user[roles][]', 'dev'],
        ['a.b', 'dot'],
        ['a b', 'space'],
        ['arr[x.y]', 'inner dot'],
        ['idx[3]', 'three'],
        ['idx[]', 'next'],
        ['utf', 'Jörg & ünïcode=%'],
    ];

    /** @var list<array{string, string, string, string}> field, file name, type, content */
    private const FILES = [
        ['avatar', 'me.png', 'image/png', "\x89PNG data"],
        ['docs[]', 'a.pdf', 'application/pdf', 'first'],
        ['docs[]', 'b.pdf', 'application/pdf', 'second!'],
        ['deep[x][y]', 'c.txt', 'text/plain', 'deep'],
        ['deep[x][z][]', 'd.txt', 'text/plain', ''],
    ];

    public function testFormMatchesPhpMultipartParsing(): void
    {
        $reference = $this->postToPhp();

        $uploads = [];
        foreach (self::FILES as [$field, $name, $type, $content]) {
            $uploads[] = [$field, $name, $type, 'TMP', UPLOAD_ERR_OK, \strlen($content)];
        }
        self::assertSame($reference['post'], Form::fields(self::FIELDS));
        self::assertSame($reference['files'], Form::files($uploads));
    }

    /**
     * @return array{post: array<mixed>, files: array<mixed>}
     */
    private function postToPhp(): array
    {
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($probe, false);
        fclose($probe);
        $log = tempnam(sys_get_temp_dir(), 'ferry-php-s-');
        $process = proc_open(
            [PHP_BINARY, '-S', $address, __DIR__ . '/fixtures/form-dump.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'a']],
            $pipes
        );
        self::assertIsResource($process);
        try {
            $boundary = 'ferry' . bin2hex(random_bytes(8));
            $body = '';
            foreach (self::FIELDS as [$name, $value]) {
                $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$value\r\n";
            }
            foreach (self::FILES as [$field, $file, $type, $content]) {
                $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$field\"; filename=\"$file\"\r\n"
                    . "Content-Type: $type\r\n\r\n$content\r\n";
            }
            $body .= "--$boundary--\r\n";
            $request = "POST /form HTTP/1.1\r\nHost: $address\r\nConnection: close\r\n"
                . "Content-Type: multipart/form-data; boundary=$boundary\r\nContent-Length: " . \strlen($body) . "\r\n\r\n" . $body;

            $deadline = microtime(true) + 10;
            do {
                $conn = @stream_socket_client("tcp://$address", $errno, $error, 1);
                if ($conn === false) {
                    usleep(20000);
                }
            } while ($conn === false && microtime(true) < $deadline);
            self::assertIsResource($conn, "php -S did not start: $error; " . file_get_contents($log));
            stream_set_timeout($conn, 10);
            fwrite($conn, $request);
            $response = stream_get_contents($conn);
            fclose($conn);
            [, $json] = explode("\r\n\r\n", (string) $response, 2) + [1 => ''];

            return json_decode($json, true, 32, JSON_THROW_ON_ERROR);
        } finally {
            proc_terminate($process);
            proc_close($process);
            @unlink($log);
        }
    }
}
