<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Request;
use Ferry\Worker\ProtocolException;
use PHPUnit\Framework\TestCase;

final class HttpRequestTest extends TestCase
{
    /**
     * A context shaped like docs/protocol.md "HTTP request context".
     *
     * @param array<string, mixed> $override
     */
    public static function context(array $override = []): string
    {
        return serialize($override + [
            'method' => 'GET',
            'uri' => '/shop/items?id=5&tags[]=a&tags[]=b&x.y=1',
            'path' => '/shop/items',
            'query' => 'id=5&tags[]=a&tags[]=b&x.y=1',
            'protocol' => 'HTTP/1.1',
            'remote_addr' => '10.1.2.3:53412',
            'host' => 'example.com:8080',
            'headers' => [
                'Accept' => ['text/html', 'application/json'],
                'Cookie' => ['a=1', 'b=2'],
                'X-Request-Id' => ['abc'],
            ],
            'cookies' => ['a' => '1', 'b' => '2'],
            'form' => [],
            'files' => [],
            'parsed' => false,
        ]);
    }

    public function testDecodesTheContextFields(): void
    {
        $r = Request::fromContext(self::context(), '');
        self::assertSame('GET', $r->method);
        self::assertSame('/shop/items?id=5&tags[]=a&tags[]=b&x.y=1', $r->uri);
        self::assertSame('/shop/items', $r->path);
        self::assertSame('HTTP/1.1', $r->protocol);
        self::assertSame('example.com:8080', $r->host);
        self::assertSame(['a' => '1', 'b' => '2'], $r->cookies);
        self::assertSame('1', $r->cookie('a'));
        self::assertNull($r->cookie('zzz'));
        self::assertSame([], $r->post());
        self::assertSame([], $r->files());
    }

    public function testFieldsLeftOutTakeTheirDefaults(): void
    {
        // The gateway leaves out fields holding their documented default (docs/protocol.md).
        $r = Request::fromContext(serialize([
            'method' => 'GET', 'uri' => '/', 'path' => '/', 'remote_addr' => '127.0.0.1:5000',
            'host' => 'h', 'headers' => ['Host' => ['h']],
        ]), '');
        self::assertSame('', $r->queryString);
        self::assertSame('HTTP/1.1', $r->protocol);
        self::assertSame('http', $r->scheme);
        self::assertSame([], $r->cookies);
        self::assertSame([], $r->form);
        self::assertSame([], $r->uploads);
        self::assertFalse($r->parsed);
        self::assertSame([], $r->query());
        self::assertSame('HTTP/1.1', $r->server()['SERVER_PROTOCOL']);
    }

    public function testCookiePathsAreRebuiltAsPhpNestsThem(): void
    {
        // The server has applied PHP's rules (cmd/ferry/inputs_e2e_test.go compares them with
        // PHP's own): names mangled, values decoded, one entry per value, a nested one by path.
        $r = Request::fromContext(self::context([
            'cookies' => ['a' => 'v 1', 'b' => 'x+y', 'c_d' => '1', 'e[k]' => '2', 'e[0]' => '3', 'f' => '%zz', 'g' => '',
                'h[ 7][x[y]' => '4', 5 => 'five'],
        ]), '');
        self::assertSame(
            ['a' => 'v 1', 'b' => 'x+y', 'c_d' => '1', 'e' => ['k' => '2', 0 => '3'], 'f' => '%zz', 'g' => '',
                'h' => [' 7' => ['x[y' => '4']], 5 => 'five'],
            $r->cookies
        );
    }

    public function testFlatCookiesAreTakenAsSent(): void
    {
        $cookies = ['a.b' => 'x%20y', 'c d' => '+', 7 => ''];
        self::assertSame($cookies, Request::fromContext(self::context(['cookies' => $cookies]), '')->cookies);
    }

    public function testFormBodyWithNulBytesIsReadAsPhpReadsPost(): void
    {
        $r = Request::fromContext(self::context([
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
        ]), "a=1\0x&b\0c=2&d=%\0");
        // PHP's $_POST for these bytes: the value keeps its NUL, the name ends at it.
        self::assertSame(['a' => "1\0x", 'b' => '2', 'd' => "%\0"], $r->post());
    }

    public function testQueryIsParsedLikeGet(): void
    {
        $r = Request::fromContext(self::context(), '');
        self::assertSame(['id' => '5', 'tags' => ['a', 'b'], 'x_y' => '1'], $r->query());
    }

    public function testHeadersAreCaseInsensitive(): void
    {
        $r = Request::fromContext(self::context(), '');
        self::assertSame('text/html', $r->header('accept'));
        self::assertSame('text/html, application/json', $r->headerLine('ACCEPT'));
        self::assertSame('abc', $r->header('x-request-id'));
        self::assertTrue($r->hasHeader('X-REQUEST-ID'));
        self::assertNull($r->header('Missing'));
        self::assertSame('d', $r->header('Missing', 'd'));
        self::assertSame('', $r->headerLine('Missing'));
    }

    public function testServerParams(): void
    {
        $s = Request::fromContext(self::context(), '')->server();
        self::assertSame('GET', $s['REQUEST_METHOD']);
        self::assertSame('/shop/items?id=5&tags[]=a&tags[]=b&x.y=1', $s['REQUEST_URI']);
        self::assertSame('id=5&tags[]=a&tags[]=b&x.y=1', $s['QUERY_STRING']);
        self::assertSame('10.1.2.3', $s['REMOTE_ADDR']);
        self::assertSame('53412', $s['REMOTE_PORT']);
        self::assertSame('example.com:8080', $s['HTTP_HOST']);
        self::assertSame('example.com', $s['SERVER_NAME']);
        self::assertSame('8080', $s['SERVER_PORT']);
        self::assertSame('HTTP/1.1', $s['SERVER_PROTOCOL']);
        self::assertSame('443', Request::fromContext(self::context(['host' => 'example.com', 'scheme' => 'https']), '')->server()['SERVER_PORT']);
        self::assertSame('80', Request::fromContext(self::context(['host' => 'example.com']), '')->server()['SERVER_PORT']);
        self::assertSame('text/html, application/json', $s['HTTP_ACCEPT']);
        self::assertSame('a=1; b=2', $s['HTTP_COOKIE']);
        self::assertSame('abc', $s['HTTP_X_REQUEST_ID']);
        self::assertEqualsWithDelta(microtime(true), $s['REQUEST_TIME_FLOAT'], 5.0);
    }

    /** Behind a trusted proxy the server's host (X-Forwarded-Host applied) is not the Host header. */
    public function testHttpHostIsTheServersHostNotTheRawHeader(): void
    {
        $s = Request::fromContext(self::context(['host' => 'shop.example', 'headers' => ['Host' => ['10.0.0.5:8080']]]), '')->server();
        self::assertSame('shop.example', $s['HTTP_HOST']);
        self::assertSame('shop.example', $s['SERVER_NAME']);
    }

    public function testSchemeReachesServerParams(): void
    {
        $plain = Request::fromContext(self::context(['scheme' => 'http']), '');
        self::assertSame('http', $plain->scheme);
        self::assertSame('http', $plain->server()['REQUEST_SCHEME']);
        self::assertArrayNotHasKey('HTTPS', $plain->server());

        $tls = Request::fromContext(self::context(['scheme' => 'https']), '');
        self::assertSame('https', $tls->scheme);
        self::assertSame('on', $tls->server()['HTTPS']);
        self::assertSame('https', $tls->server()['REQUEST_SCHEME']);
    }

    public function testIpv6RemoteAddress(): void
    {
        $s = Request::fromContext(self::context(['remote_addr' => '[::1]:4000', 'host' => '[::1]:8080']), '')->server();
        self::assertSame('::1', $s['REMOTE_ADDR']);
        self::assertSame('4000', $s['REMOTE_PORT']);
        self::assertSame('::1', $s['SERVER_NAME']);
        self::assertSame('8080', $s['SERVER_PORT']);
    }

    public function testUrlencodedBodyIsParsedLikePost(): void
    {
        $body = 'name=J%C3%B6rg&list[]=1&list[]=2&map[k]=v&plus=a+b';
        $r = Request::fromContext(self::context([
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded; charset=UTF-8'], 'Content-Length' => [(string) \strlen($body)]],
        ]), $body);
        self::assertSame(['name' => 'Jörg', 'list' => ['1', '2'], 'map' => ['k' => 'v'], 'plus' => 'a b'], $r->post());
        self::assertSame($body, $r->body);
        self::assertSame('application/x-www-form-urlencoded', $r->mediaType());
        self::assertSame('application/x-www-form-urlencoded; charset=UTF-8', $r->server()['CONTENT_TYPE']);
        self::assertSame((string) \strlen($body), $r->server()['CONTENT_LENGTH']);
    }

    public function testOtherBodiesAreNotParsedAsForms(): void
    {
        $r = Request::fromContext(self::context([
            'method' => 'POST',
            'headers' => ['Content-Type' => ['application/json']],
        ]), '{"a":[1,2]}');
        self::assertSame([], $r->post());
        self::assertSame(['a' => [1, 2]], $r->json());
    }

    public function testMultipartPairsRebuildNestedPostAndFiles(): void
    {
        $r = Request::fromContext(self::context([
            'method' => 'POST',
            'headers' => ['Content-Type' => ['multipart/form-data; boundary=xyz']],
            'form' => [['title', 'Hello'], ['tags[]', 'a'], ['tags[]', 'b'], ['user[name]', 'Ann'], ['user[roles][]', 'admin'], ['a.b', 'dot']],
            'files' => [
                ['avatar', 'me.png', 'image/png', '/tmp/f1', 0, 123],
                ['docs[]', 'a.pdf', 'application/pdf', '/tmp/f2', 0, 10],
                ['docs[]', 'b.pdf', 'application/pdf', '/tmp/f3', 0, 20],
                ['deep[x][y]', '', 'application/octet-stream', '', UPLOAD_ERR_NO_FILE, 0],
                ['folder[]', 'dir/sub/c.txt', 'text/plain', '/tmp/f4', 0, 5],
            ],
            'parsed' => true,
        ]), '');
        self::assertSame([
            'title' => 'Hello',
            'tags' => ['a', 'b'],
            'user' => ['name' => 'Ann', 'roles' => ['admin']],
            'a_b' => 'dot',
        ], $r->post());
        $files = $r->files();
        self::assertSame(
            ['name' => 'me.png', 'full_path' => 'me.png', 'type' => 'image/png', 'tmp_name' => '/tmp/f1', 'error' => 0, 'size' => 123],
            $files['avatar']
        );
        self::assertSame(['a.pdf', 'b.pdf'], $files['docs']['name']);
        self::assertSame(['/tmp/f2', '/tmp/f3'], $files['docs']['tmp_name']);
        self::assertSame([10, 20], $files['docs']['size']);
        self::assertSame([0, 0], $files['docs']['error']);
        self::assertSame(UPLOAD_ERR_NO_FILE, $files['deep']['error']['x']['y']);
        self::assertSame('', $files['deep']['name']['x']['y']);
        self::assertSame(['c.txt'], $files['folder']['name']);
        self::assertSame(['dir/sub/c.txt'], $files['folder']['full_path']);
    }

    public function testFolderUploadNamesAndEmptyFileInputsAreShapedLikePhp(): void
    {
        $files = Request::fromContext(self::context([
            'method' => 'POST',
            'files' => [
                ['tree', 'photos/2024/a.jpg', 'image/jpeg', '/tmp/f1', 0, 9],
                ['old', 'C:\\Users\\ann\\b.txt', 'text/plain', '/tmp/f2', 0, 1],
                // The browser labels an empty file input application/octet-stream; PHP drops that.
                ['empty', '', 'application/octet-stream', '', UPLOAD_ERR_NO_FILE, 0],
            ],
            'parsed' => true,
        ]), '')->files();
        self::assertSame(
            ['name' => 'a.jpg', 'full_path' => 'photos/2024/a.jpg', 'type' => 'image/jpeg', 'tmp_name' => '/tmp/f1', 'error' => 0, 'size' => 9],
            $files['tree']
        );
        self::assertSame(['b.txt', 'C:\\Users\\ann\\b.txt'], [$files['old']['name'], $files['old']['full_path']]);
        self::assertSame(
            ['name' => '', 'full_path' => '', 'type' => '', 'tmp_name' => '', 'error' => UPLOAD_ERR_NO_FILE, 'size' => 0],
            $files['empty']
        );
    }

    public function testArrayCookiesAreReturnedAsArrays(): void
    {
        $r = Request::fromContext(self::context(['cookies' => ['pref[lang]' => 'de', 'pref[theme]' => 'dark', 'sid' => 'abc']]), '');
        self::assertSame(['lang' => 'de', 'theme' => 'dark'], $r->cookie('pref'));
        self::assertSame('abc', $r->cookie('sid'));
        self::assertSame(['none'], $r->cookie('missing', ['none']));
        self::assertNull($r->cookie('pref[lang]'), 'nested names are not keys, as in $_COOKIE');
    }

    public function testSpooledBodyIsReadLazilyFromItsFile(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'ferry-body-');
        file_put_contents($file, 'a[]=1&a[]=2&b=big');
        try {
            $r = Request::fromContext(self::context([
                'method' => 'POST',
                'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
                'body_file' => $file,
            ]), '');
            self::assertSame($file, $r->bodyFile());
            self::assertTrue(isset($r->body));
            self::assertSame(['a' => ['1', '2'], 'b' => 'big'], $r->post());
            file_put_contents($file, 'changed');
            self::assertSame('a[]=1&a[]=2&b=big', $r->body(), 'read once');
            self::assertSame('a[]=1&a[]=2&b=big', $r->body);
            self::assertFileExists($file, 'the server removes it, not the worker');
        } finally {
            @unlink($file);
        }
        $plain = Request::fromContext(self::context(), 'inline');
        self::assertNull($plain->bodyFile());
        self::assertSame('inline', $plain->body());
    }

    public function testUnreadableBodyFileFailsLoudly(): void
    {
        $r = Request::fromContext(self::context(['body_file' => '/nonexistent/ferry-body']), '');
        $this->expectException(\RuntimeException::class);
        $this->expectExceptionMessage('cannot read the request body from /nonexistent/ferry-body');
        $r->body();
    }

    public function testMissingOptionalFieldsGetDefaults(): void
    {
        $r = Request::fromContext(serialize(['method' => 'DELETE']), 'x');
        self::assertSame('/', $r->uri);
        self::assertSame([], $r->headers);
        self::assertSame([], $r->query());
        self::assertSame('x', $r->body);
    }

    /**
     * @return iterable<string, array{string, string}>
     */
    public static function badContexts(): iterable
    {
        yield 'not serialized' => ['{"method":"GET"}', 'not a serialized request array'];
        yield 'not an array' => [serialize('GET'), 'not a serialized request array'];
        yield 'no method' => [serialize(['uri' => '/']), 'not a serialized request array'];
        yield 'headers not an array' => [serialize(['method' => 'GET', 'headers' => 'x']), 'wrong type'];
        yield 'object refused' => [serialize(['method' => 'GET', 'cookies' => new \ArrayObject()]), 'wrong type'];
    }

    /**
     * @dataProvider badContexts
     */
    public function testBadContextIsAProtocolError(string $context, string $message): void
    {
        $this->expectException(ProtocolException::class);
        $this->expectExceptionMessage($message);
        Request::fromContext($context, '');
    }
}
