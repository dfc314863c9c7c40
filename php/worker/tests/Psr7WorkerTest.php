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
            'headers' => ['Content-Type' => ['multipart/form-data; boundary=b'], 'X-Forwarded-Proto' => ['https'], 'Accept' => ['a', 'b']],
            'form' => [['user[name]', 'Ann']],
            'files' => [
                ['docs[]', 'a.pdf', 'application/pdf', __FILE__, 0, filesize(__FILE__)],
                ['photo', 'p.png', 'image/png', '', UPLOAD_ERR_NO_FILE, 0],
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
        self::assertSame('a.pdf', $files['docs'][0]->getClientFilename());
        self::assertSame('application/pdf', $files['docs'][0]->getClientMediaType());
        self::assertSame(filesize(__FILE__), $files['docs'][0]->getSize());
        self::assertSame(file_get_contents(__FILE__), (string) $files['docs'][0]->getStream());
        self::assertSame(UPLOAD_ERR_NO_FILE, $files['photo']->getError());
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
