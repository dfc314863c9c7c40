<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Form;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use PHPUnit\Framework\TestCase;

/**
 * Compares Form with PHP's own multipart parsing: the same fields are posted to PHP's
 * built-in web server (real $_POST / $_FILES) and given to Form as the pairs Ferry's
 * gateway would send. $_REQUEST is compared the same way, for several request_order values.
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
        // A folder upload: the browser sends the path relative to the chosen folder.
        ['tree[]', 'photos/2024/e.jpg', 'image/jpeg', 'jpeg'],
        ['tree[]', 'photos/f.jpg', 'image/jpeg', 'jpeg'],
        ['win', 'C:\\Users\\ann\\g.txt', 'text/plain', 'old browsers send the whole path'],
    ];

    /** @var list<string> file inputs left empty: the browser sends filename="" and no content */
    private const EMPTY_INPUTS = ['nothing', 'more[]', 'deep[x][none]'];

    public function testFormMatchesPhpMultipartParsing(): void
    {
        $reference = $this->postToPhp();

        $uploads = [];
        foreach (self::FILES as [$field, $name, $type, $content]) {
            $uploads[] = [$field, $name, $type, 'TMP', UPLOAD_ERR_OK, \strlen($content)];
        }
        foreach (self::EMPTY_INPUTS as $field) {
            // As the server sends them: the part's type kept, no file, no size.
            $uploads[] = [$field, '', 'application/octet-stream', '', UPLOAD_ERR_NO_FILE, 0];
        }
        self::assertSame($reference['post'], Form::fields(self::FIELDS));
        self::assertSame($reference['files'], Form::files($uploads));
    }

    /**
     * @return iterable<string, array{string}>
     */
    public static function requestOrders(): iterable
    {
        foreach (['GP', 'PG', 'CPG', 'GPC', 'gpc', 'EGPCS', 'G'] as $order) {
            yield $order => [$order];
        }
    }

    /**
     * @dataProvider requestOrders
     */
    public function testRequestVariablesMatchPhp(string $order): void
    {
        $query = 'a[x]=1&b=get&n[]=g&q=only';
        $body = 'a[y]=2&b=post&n[]=p&a[x][deep]=3';
        $cookies = ['b' => 'cookie', 'c' => '3', 'a[z]' => 'c', 'n[]' => 'c'];
        $cookieHeader = implode('; ', array_map(static fn ($k, $v) => "$k=$v", array_keys($cookies), $cookies));
        $reference = $this->askPhp(
            "POST /r?$query HTTP/1.1\r\nCookie: $cookieHeader\r\nContent-Type: application/x-www-form-urlencoded\r\n",
            $body,
            ['request_order' => $order]
        );

        $request = Request::fromContext(HttpRequestTest::context([
            'method' => 'POST',
            'query' => $query,
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
            'cookies' => $cookies,
        ]), $body);
        self::assertSame([$reference['get'], $reference['post'], $reference['cookie']], [$request->query(), $request->post(), $request->cookies]);
        self::assertSame($reference['request'], HttpWorker::requestVariables($request->query(), $request->post(), $request->cookies, $order));
    }

    private function multipartBody(string $boundary): string
    {
        $body = '';
        foreach (self::FIELDS as [$name, $value]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$value\r\n";
        }
        foreach (self::FILES as [$field, $file, $type, $content]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$field\"; filename=\"$file\"\r\n"
                . "Content-Type: $type\r\n\r\n$content\r\n";
        }
        foreach (self::EMPTY_INPUTS as $field) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$field\"; filename=\"\"\r\n"
                . "Content-Type: application/octet-stream\r\n\r\n\r\n";
        }

        return $body . "--$boundary--\r\n";
    }

    /**
     * @return array{post: array<mixed>, files: array<mixed>}
     */
    private function postToPhp(): array
    {
        $boundary = 'ferry' . bin2hex(random_bytes(8));

        return $this->askPhp(
            "POST /form HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=$boundary\r\n",
            $this->multipartBody($boundary)
        );
    }

    /**
     * Sends one request to PHP's built-in server and returns its superglobals.
     *
     * @param string $head request line and headers, each line ending in CRLF
     * @param array<string, string> $ini
     * @return array<string, array<mixed>>
     */
    private function askPhp(string $head, string $body, array $ini = []): array
    {
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($probe, false);
        fclose($probe);
        $log = tempnam(sys_get_temp_dir(), 'ferry-php-s-');
        $command = [PHP_BINARY];
        foreach ($ini as $key => $value) {
            array_push($command, '-d', "$key=$value");
        }
        $process = proc_open(
            [...$command, '-S', $address, __DIR__ . '/fixtures/http-form-dump.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'a']],
            $pipes
        );
        self::assertIsResource($process);
        try {
            $request = $head . "Host: $address\r\nConnection: close\r\nContent-Length: " . \strlen($body) . "\r\n\r\n" . $body;

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
