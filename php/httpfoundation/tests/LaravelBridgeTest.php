<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation\Tests;

use Ferry\Laravel\Http\RequestBridge;
use Ferry\Laravel\Http\ResponseBridge;
use Ferry\Laravel\Http\UploadedFile;
use Ferry\Worker\Http\Request as FerryRequest;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use PHPUnit\Framework\TestCase;
use Symfony\Component\HttpFoundation\BinaryFileResponse;
use Symfony\Component\HttpFoundation\Cookie;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\StreamedResponse;

/**
 * Laravel's adapter of the bridge (php/laravel's Http\RequestBridge, ResponseBridge and
 * UploadedFile) on its own, with Debian's Illuminate and Symfony classes: what the
 * end-to-end tests cannot reach easily (HTTPS, nested uploads, spooled bodies, streamed
 * and file responses).
 */
final class LaravelBridgeTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/ferry-laravel-bridge-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $f) {
            $f->isDir() ? rmdir($f->getPathname()) : unlink($f->getPathname());
        }
        rmdir($this->dir);
    }

    public function testServerParametersAreAnFpmFrontControllers(): void
    {
        $request = (new RequestBridge('/srv/app/public'))->toLaravel(new FerryRequest(
            method: 'GET',
            uri: '/shop/item?id=7',
            path: '/shop/item',
            queryString: 'id=7',
            remoteAddr: '192.0.2.9:4000',
            host: 'example.test:8443',
            headers: ['Accept' => ['text/html'], 'Cookie' => ['a=1']],
            cookies: ['a' => '1'],
            scheme: 'https',
        ));
        self::assertSame('/shop/item', $request->getPathInfo());
        self::assertSame('', $request->getBaseUrl());
        self::assertSame('shop/item', $request->path());
        self::assertSame('https://example.test:8443/shop/item?id=7', $request->fullUrl());
        self::assertTrue($request->isSecure());
        self::assertSame('192.0.2.9', $request->ip());
        self::assertSame('7', $request->query('id'));
        self::assertSame('1', $request->cookie('a'));
        self::assertSame('text/html', $request->header('Accept'));
        self::assertSame('/index.php', $request->server('SCRIPT_NAME'));
        self::assertSame('/srv/app/public/index.php', $request->server('SCRIPT_FILENAME'));
        self::assertSame(['id' => '7'], $request->request->all(), 'a GET request\'s input is its query, as Request::capture() makes it');
    }

    public function testJsonBodyAndSpooledBody(): void
    {
        $bridge = new RequestBridge('/srv/app/public');
        $json = $bridge->toLaravel(new FerryRequest(method: 'PUT', headers: ['Content-Type' => ['application/json']], body: '{"a":{"b":1}}'));
        self::assertSame(1, $json->input('a.b'));
        self::assertSame(['a' => ['b' => 1]], $json->request->all());

        file_put_contents($this->dir . '/body', 'name=spooled');
        $spooled = $bridge->toLaravel(new FerryRequest(method: 'POST', headers: ['Content-Type' => ['application/x-www-form-urlencoded']], bodyFile: $this->dir . '/body'));
        self::assertSame('spooled', $spooled->input('name'));
        self::assertSame('name=spooled', $spooled->getContent());
    }

    public function testNestedUploadsAreMovableOnce(): void
    {
        file_put_contents($this->dir . '/t1', 'one');
        file_put_contents($this->dir . '/t2', 'two');
        file_put_contents($this->dir . '/stranger', 'not an upload');
        $ferry = new FerryRequest(
            method: 'POST',
            form: [['title', 'docs']],
            uploads: [
                ['docs[]', 'a.txt', 'text/plain', $this->dir . '/t1', UPLOAD_ERR_OK, 3],
                ['docs[]', 'b.txt', 'text/plain', $this->dir . '/t2', UPLOAD_ERR_OK, 3],
                ['empty', '', '', '', UPLOAD_ERR_NO_FILE, 0],
                ['big', 'big.bin', 'application/octet-stream', '', UPLOAD_ERR_INI_SIZE, 0],
            ],
            parsed: true,
        );
        $request = (new RequestBridge('/srv/app/public'))->toLaravel($ferry);
        self::assertSame('docs', $request->input('title'));
        $docs = $request->file('docs');
        self::assertCount(2, $docs);
        self::assertInstanceOf(UploadedFile::class, $docs[0]);
        self::assertSame('b.txt', $docs[1]->getClientOriginalName());
        self::assertSame('two', $docs[1]->get());
        self::assertTrue($docs[0]->isValid());
        self::assertNull($request->file('empty'));
        self::assertTrue($request->files->has('empty'), 'an empty file input is a null file, as under FPM');
        self::assertFalse($request->file('big')->isValid());
        self::assertSame(UPLOAD_ERR_INI_SIZE, $request->file('big')->getError());

        $moved = $docs[0]->move($this->dir . '/out', 'kept.txt');
        self::assertSame('one', file_get_contents($moved->getPathname()));
        self::assertFileDoesNotExist($this->dir . '/t1');
        self::assertFalse($docs[0]->isValid());
        try {
            $docs[0]->move($this->dir . '/out', 'again.txt');
            self::fail('a moved upload moved twice');
        } catch (FileException) {
        }

        // A path that is not one of this request's uploads is never valid nor moved.
        $forged = new UploadedFile($this->dir . '/stranger', 'x', null, UPLOAD_ERR_OK, $ferry);
        self::assertFalse($forged->isValid());
        $this->expectException(FileException::class);
        $forged->move($this->dir . '/out');
    }

    public function testResponseStatusPhraseHeadersAndCookies(): void
    {
        $response = new Response('gone', 410, ['X-Custom' => ['a', 'b']]);
        $response->setStatusCode(410, 'Gone Fishing');
        $response->headers->setCookie(Cookie::create('sid', 'v 1', 1_900_000_000, '/app', 'example.test', true, true, false, 'none'));
        $ferry = ResponseBridge::toFerry($response);
        self::assertSame(410, $ferry->getStatus());
        self::assertSame('Gone Fishing', $ferry->getReason());
        self::assertSame(['a', 'b'], $ferry->getHeader('X-Custom'));
        self::assertSame([], $ferry->getHeader('Date'), 'the server sets Date');
        self::assertCount(1, $ferry->getHeader('Set-Cookie'));
        // Symfony 5.4 writes the date 17-Mar-2030, 6.x 17 Mar 2030 (RFC 9110's form).
        self::assertMatchesRegularExpression('#^sid=v%201; expires=Sun, (?:17-Mar-2030|17 Mar 2030) 17:46:40 GMT; Max-Age=\d+; path=/app; domain=example.test; secure; httponly; samesite=none$#', $ferry->getHeader('Set-Cookie')[0]);
        self::assertSame(['text/html; charset=UTF-8'], $ferry->getHeader('Content-Type'), 'PHP\'s default type, as FPM adds it');
        self::assertSame('gone', $ferry->body);
    }

    public function testStreamedAndFileResponsesBecomeTheBody(): void
    {
        $streamed = new StreamedResponse(static function (): void {
            echo 'chunk 1, ';
            flush();
            echo 'chunk 2';
        }, 200, ['Content-Type' => 'text/plain']);
        self::assertSame('chunk 1, chunk 2', ResponseBridge::toFerry($streamed)->body);

        file_put_contents($this->dir . '/file.txt', 'file contents');
        $file = (new BinaryFileResponse($this->dir . '/file.txt'))->prepare(Request::create('/'));
        $ferry = ResponseBridge::toFerry($file);
        self::assertSame('', $ferry->body, 'a download is sent by the server, not through PHP');
        self::assertSame(['path' => realpath($this->dir . '/file.txt'), 'offset' => 0, 'delete' => false], $ferry->getFile());
        self::assertSame(['text/plain; charset=UTF-8'], $ferry->getHeader('Content-Type'));
    }
}
