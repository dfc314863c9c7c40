<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Request;
use Ferry\Worker\Psr7\Psr7Worker;
use Ferry\Worker\Relay\StreamRelay;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Worker;
use Nyholm\Psr7\Response as PsrResponse;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\UploadedFileInterface;
use PHPUnit\Framework\TestCase;

final class Psr7WorkerTest extends TestCase
{
    /** @var array<int, resource> */
    private array $pair = [];

    protected function tearDown(): void
    {
        foreach ($this->pair as $stream) {
            fclose($stream);
        }
    }

    private function bridge(): Psr7Worker
    {
        $this->pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);

        return new Psr7Worker(new HttpWorker(new Worker(new StreamRelay($this->pair[0], $this->pair[0]))));
    }

    public function testServerRequestCarriesEverything(): void
    {
        $this->bridge();
        $request = Request::fromContext(HttpRequestTest::context([
            'method' => 'POST',
            'protocol' => 'HTTP/2.0',
            'scheme' => 'https',
            'headers' => ['Content-Type' => ['multipart/form-data; boundary=b'], 'Accept' => ['a', 'b']],
            'form' => [['user[name]', 'Ann']],
            'files' => [
                ['docs[]', 'scans/a.pdf', 'application/pdf', __FILE__, 0, filesize(__FILE__)],
                ['photo', '', 'application/octet-stream', '', UPLOAD_ERR_NO_FILE, 0],
            ],
            'parsed' => true,
        ]), '');
        $psr = Psr7Worker::toServerRequest($request);

        self::assertSame('POST', $psr->getMethod());
        self::assertSame('https://example.com:8080/shop/items?id=5&tags%5B%5D=a&tags%5B%5D=b&x.y=1', (string) $psr->getUri());
        self::assertSame('2', $psr->getProtocolVersion());
        self::assertSame(['a', 'b'], $psr->getHeader('accept'));
        self::assertSame(['example.com:8080'], $psr->getHeader('Host'));
        self::assertSame(['id' => '5', 'tags' => ['a', 'b'], 'x_y' => '1'], $psr->getQueryParams());
        self::assertSame(['a' => '1', 'b' => '2'], $psr->getCookieParams());
        self::assertSame(['user' => ['name' => 'Ann']], $psr->getParsedBody());
        self::assertSame('10.1.2.3', $psr->getServerParams()['REMOTE_ADDR']);

        $files = $psr->getUploadedFiles();
        self::assertInstanceOf(UploadedFileInterface::class, $files['docs'][0]);
        self::assertSame('a.pdf', $files['docs'][0]->getClientFilename(), "the name PHP's \$_FILES shows, not the full path");
        self::assertSame('application/pdf', $files['docs'][0]->getClientMediaType());
        self::assertSame(filesize(__FILE__), $files['docs'][0]->getSize());
        self::assertSame(file_get_contents(__FILE__), (string) $files['docs'][0]->getStream());
        self::assertSame(UPLOAD_ERR_NO_FILE, $files['photo']->getError());
        self::assertSame('', $files['photo']->getClientFilename());
        self::assertSame('', $files['photo']->getClientMediaType());
    }

    public function testAForwardedProtoHeaderFromTheClientChangesNothing(): void
    {
        $this->bridge();
        $psr = Psr7Worker::toServerRequest(Request::fromContext(HttpRequestTest::context([
            'scheme' => 'http',
            'headers' => ['X-Forwarded-Proto' => ['https']],
        ]), ''));
        self::assertSame('http', $psr->getUri()->getScheme());
        self::assertSame('http', $psr->getServerParams()['REQUEST_SCHEME']);
        self::assertArrayNotHasKey('HTTPS', $psr->getServerParams());
        self::assertSame(['https'], $psr->getHeader('X-Forwarded-Proto'), 'still there for the application to judge');
    }

    /**
     * @return iterable<string, array{string, string, string, ?int, string}>
     */
    public static function schemesAndPorts(): iterable
    {
        yield 'https, default port' => ['https', 'example.com', 'https://example.com/shop/items', null, '443'];
        yield 'http, default port' => ['http', 'example.com', 'http://example.com/shop/items', null, '80'];
        yield 'https, own port' => ['https', 'example.com:8443', 'https://example.com:8443/shop/items', 8443, '8443'];
        yield 'http on 443' => ['http', 'example.com:443', 'http://example.com:443/shop/items', 443, '443'];
    }

    /**
     * @dataProvider schemesAndPorts
     */
    public function testServerParamsAgreeWithTheUri(string $scheme, string $host, string $uri, ?int $port, string $serverPort): void
    {
        $this->bridge();
        $psr = Psr7Worker::toServerRequest(Request::fromContext(HttpRequestTest::context([
            'scheme' => $scheme, 'host' => $host, 'uri' => '/shop/items', 'query' => '',
        ]), ''));
        $server = $psr->getServerParams();
        self::assertSame($uri, (string) $psr->getUri());
        self::assertSame($port, $psr->getUri()->getPort());
        self::assertSame([$scheme, $serverPort], [$server['REQUEST_SCHEME'], $server['SERVER_PORT']]);
        self::assertSame($scheme === 'https' ? 'on' : null, $server['HTTPS'] ?? null);
    }

    /**
     * @return iterable<string, array{string, string}>
     */
    public static function protocols(): iterable
    {
        yield 'HTTP/1.0' => ['HTTP/1.0', '1.0'];
        yield 'HTTP/1.1' => ['HTTP/1.1', '1.1'];
        yield 'HTTP/2.0' => ['HTTP/2.0', '2'];
        yield 'HTTP/2' => ['HTTP/2', '2'];
        yield 'HTTP/3.0' => ['HTTP/3.0', '3'];
        yield 'HTTP/3' => ['HTTP/3', '3'];
    }

    /**
     * @dataProvider protocols
     */
    public function testProtocolVersionIsNormalised(string $protocol, string $version): void
    {
        $this->bridge();
        $psr = Psr7Worker::toServerRequest(Request::fromContext(HttpRequestTest::context(['protocol' => $protocol]), ''));
        self::assertSame($version, $psr->getProtocolVersion());
        self::assertSame($protocol, $psr->getServerParams()['SERVER_PROTOCOL']);
    }

    public function testAChosenReasonPhraseIsSent(): void
    {
        $this->bridge();
        $custom = Psr7Worker::fromResponse((new PsrResponse())->withStatus(404, 'Nothing Here'));
        self::assertSame('{"status":404,"reason":"Nothing Here","headers":{}}', $custom->context());
        // Nyholm's own default for 413 differs from Go's: it is not the application's choice.
        foreach ([new PsrResponse(404), new PsrResponse(413), (new PsrResponse())->withStatus(200, 'OK')] as $plain) {
            self::assertStringNotContainsString('reason', Psr7Worker::fromResponse($plain)->context());
        }
    }

    public function testASpooledBodyIsAStreamOverItsFile(): void
    {
        $this->bridge();
        $file = tempnam(sys_get_temp_dir(), 'ferry-body-');
        file_put_contents($file, str_repeat('0123456789', 1000));
        try {
            $request = Request::fromContext(HttpRequestTest::context([
                'method' => 'PUT',
                'headers' => ['Content-Type' => ['application/octet-stream']],
                'body_file' => $file,
            ]), '');
            $body = Psr7Worker::toServerRequest($request)->getBody();
            self::assertSame($file, $body->getMetadata('uri'));
            self::assertFalse((new \ReflectionProperty(Request::class, 'body'))->isInitialized($request), 'the file was not read into memory');
            self::assertSame('0123456789', $body->read(10));
            self::assertSame(10000, $body->getSize());
            self::assertSame(str_repeat('0123456789', 1000), (string) $body);
            self::assertFileExists($file);
        } finally {
            @unlink($file);
        }
    }

    public function testSchemeFromTheGateway(): void
    {
        $this->bridge();
        $https = Psr7Worker::toServerRequest(Request::fromContext(HttpRequestTest::context(['scheme' => 'https']), ''));
        self::assertSame('https', $https->getUri()->getScheme());
        $http = Psr7Worker::toServerRequest(Request::fromContext(HttpRequestTest::context(['scheme' => 'http']), ''));
        self::assertSame('http', $http->getUri()->getScheme());
    }

    public function testPlainRequestHasNoParsedBodyAndKeepsTheRawBody(): void
    {
        $this->bridge();
        $psr = Psr7Worker::toServerRequest(Request::fromContext(
            HttpRequestTest::context(['method' => 'PUT', 'headers' => ['Content-Type' => ['application/json']]]),
            '{"x":1}'
        ));
        self::assertNull($psr->getParsedBody());
        self::assertSame('{"x":1}', (string) $psr->getBody());
        self::assertSame('http://example.com:8080/shop/items?id=5&tags%5B%5D=a&tags%5B%5D=b&x.y=1', (string) $psr->getUri());
    }

    public function testResponseConversionKeepsStatusHeadersAndBody(): void
    {
        $this->bridge();
        $psr = (new PsrResponse(418, ['X-A' => ['1', '2']], 'teapot'))->withAddedHeader('Set-Cookie', 'a=1')->withAddedHeader('Set-Cookie', 'b=2');
        $psr->getBody()->read(3);
        $response = Psr7Worker::fromResponse($psr);
        self::assertSame(418, $response->getStatus());
        self::assertSame(['1', '2'], $response->getHeader('X-A'));
        self::assertSame(['a=1', 'b=2'], $response->getHeader('set-cookie'));
        self::assertSame('teapot', $response->body, 'body read from the start even after a partial read');
    }

    public function testCallableAndHandleObjectAreAccepted(): void
    {
        $bridge = $this->bridge();
        $request = Request::fromContext(HttpRequestTest::context(), '');
        $callable = $bridge->adapt(static fn (ServerRequestInterface $r): ResponseInterface => new PsrResponse(200, [], $r->getUri()->getPath()));
        self::assertSame('/shop/items', $callable($request)->body);

        $object = new class () {
            public function handle(ServerRequestInterface $r): ResponseInterface
            {
                return new PsrResponse(201, [], $r->getMethod());
            }
        };
        $response = $bridge->adapt($object)($request);
        self::assertSame([201, 'GET'], [$response->getStatus(), $response->body]);
    }

    public function testHandlerReturningSomethingElseIsRefused(): void
    {
        $bridge = $this->bridge();
        $this->expectException(\TypeError::class);
        $this->expectExceptionMessage('must return a ResponseInterface, got string');
        $bridge->adapt(static fn () => 'nope')(Request::fromContext(HttpRequestTest::context(), ''));
    }

    public function testRawWorkerNeverLoadsNyholm(): void
    {
        $script = sprintf(
            'require %s; $r = Ferry\Worker\Http\Request::fromContext(%s, ""); '
            . 'Ferry\Worker\Http\HttpWorker::toResponse("x"); $r->server(); $r->files(); '
            . 'echo json_encode(array_values(array_filter(get_included_files(), fn ($f) => stripos($f, "nyholm") !== false || stripos($f, "/Psr/") !== false)));',
            var_export(\dirname(__DIR__) . '/autoload.php', true),
            var_export(HttpRequestTest::context(), true)
        );
        $output = shell_exec(escapeshellarg(PHP_BINARY) . ' -r ' . escapeshellarg($script));
        self::assertSame('[]', $output);
    }
}
