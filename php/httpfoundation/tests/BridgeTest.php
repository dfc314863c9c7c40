<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation\Tests;

use Ferry\HttpFoundation\Bridge;
use Ferry\HttpFoundation\UploadedFile;
use Ferry\Worker\Http\Request;
use PHPUnit\Framework\TestCase;
use Symfony\Component\HttpFoundation\Cookie;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\File\Exception\IniSizeFileException;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Symfony\Component\HttpFoundation\StreamedResponse;

/**
 * The conversion alone, on requests decoded from gateway contexts as a worker gets them.
 * FpmParityTest pins, for both frameworks' adapters, the points where php/symfony's and
 * php/laravel's former bridges disagreed.
 */
final class BridgeTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/ferry-httpfoundation-bridge-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    private function bridge(array $processServer = []): Bridge
    {
        return new Bridge('/srv/app/public/index.php', $processServer + ['argv' => ['public/index.php'], 'argc' => 1, 'SCRIPT_NAME' => 'public/index.php']);
    }

    /** @param array<string, mixed> $context */
    private static function request(array $context, string $body = ''): Request
    {
        return Request::fromContext(serialize($context + ['method' => 'GET', 'uri' => '/', 'path' => '/']), $body);
    }

    public function testServerParametersAreThoseOfAFrontControllerUnderFpm(): void
    {
        $request = self::request([
            'uri' => '/shop/cart?x=1', 'path' => '/shop/cart', 'query' => 'x=1',
            'remote_addr' => '198.51.100.7:50123', 'host' => 'shop.example:8443', 'scheme' => 'https',
            'headers' => ['Accept' => ['text/html'], 'Authorization' => ['Basic ' . base64_encode('ann:pw')]],
        ]);
        $symfony = $this->bridge(['APP_SECRET' => 's3', 'HTTP_PROXY' => 'http://evil:3128', 'CONTENT_TYPE' => 'x/y'])->request($request);

        $this->assertSame('/srv/app/public/index.php', $symfony->server->get('SCRIPT_FILENAME'));
        $this->assertSame('/index.php', $symfony->server->get('SCRIPT_NAME'));
        $this->assertSame('/index.php/shop/cart', $symfony->server->get('PHP_SELF'));
        $this->assertSame('/shop/cart', $symfony->server->get('PATH_INFO'));
        $this->assertSame(['', '/shop/cart'], [$symfony->getBaseUrl(), $symfony->getPathInfo()]);
        $this->assertSame('https://shop.example:8443/shop/cart?x=1', $symfony->getUri());
        $this->assertTrue($symfony->isSecure());
        $this->assertSame('198.51.100.7', $symfony->getClientIp());
        $this->assertSame(['ann', 'pw'], [$symfony->getUser(), $symfony->getPassword()]);
        $this->assertSame('s3', $symfony->server->get('APP_SECRET'), 'the process environment is there, as FPM\'s env[] would put it');
        $this->assertFalse($symfony->headers->has('Proxy'), 'an environment variable never poses as a request header');
        $this->assertFalse($symfony->headers->has('Content-Type'));
        $this->assertFalse($symfony->server->has('argv'));
    }

    public function testCookiesQueryFormAndJsonBodies(): void
    {
        $symfony = $this->bridge()->request(self::request([
            'method' => 'PUT', 'query' => 'a%5Bb%5D=1', 'cookies' => ['sid' => 'a b', 'x_y' => '1'],
            'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']],
        ], 'name=Ann&tags%5B%5D=t'));
        $this->assertSame(['a' => ['b' => '1']], $symfony->query->all());
        $this->assertSame(['name' => 'Ann', 'tags' => ['t']], $symfony->request->all());
        $this->assertSame(['sid' => 'a b', 'x_y' => '1'], $symfony->cookies->all());

        $symfony = $this->bridge()->request(self::request(['method' => 'POST', 'headers' => ['Content-Type' => ['application/json']]], '{"a":[1]}'));
        $this->assertSame(['a' => [1]], $symfony->toArray());
        $this->assertSame([], $symfony->request->all());
    }

    public function testASpooledBodyIsReadFromItsFile(): void
    {
        file_put_contents("$this->dir/body", str_repeat('z', 100000));
        $symfony = $this->bridge()->request(self::request(['method' => 'POST', 'body_file' => "$this->dir/body", 'headers' => ['Content-Type' => ['application/octet-stream']]]));
        $this->assertIsResource($symfony->getContent(true));
        $this->assertSame(str_repeat('z', 100000), stream_get_contents($symfony->getContent(true)));
    }

    public function testUploadsBecomeUploadedFilesThatMoveOnce(): void
    {
        file_put_contents("$this->dir/t1", 'one');
        file_put_contents("$this->dir/t2", 'two');
        $symfony = $this->bridge()->request(self::request(['method' => 'POST', 'parsed' => true, 'files' => [
            ['docs[]', 'a.txt', 'text/plain', "$this->dir/t1", 0, 3],
            ['docs[]', 'dir/b.txt', 'text/plain', "$this->dir/t2", 0, 3],
            ['empty', '', 'application/octet-stream', '', UPLOAD_ERR_NO_FILE, 0],
            ['big[file]', 'huge.iso', 'application/octet-stream', '', UPLOAD_ERR_INI_SIZE, 0],
        ]]));

        [$a, $b] = $symfony->files->get('docs');
        $this->assertInstanceOf(UploadedFile::class, $a);
        $this->assertSame(['a.txt', 'b.txt', 'text/plain'], [$a->getClientOriginalName(), $b->getClientOriginalName(), $a->getClientMimeType()]);
        $this->assertNull($symfony->files->get('empty'));
        $this->assertTrue($a->isValid());

        $moved = $a->move("$this->dir/out", 'kept.txt');
        $this->assertSame('one', file_get_contents($moved->getPathname()));
        $this->assertFileDoesNotExist("$this->dir/t1");
        $this->assertFalse($a->isValid());
        try {
            $a->move("$this->dir/out", 'again.txt');
            $this->fail('an upload moved twice');
        } catch (FileException) {
        }

        $big = $symfony->files->get('big')['file'];
        $this->assertFalse($big->isValid());
        $this->expectException(IniSizeFileException::class);
        $big->move("$this->dir/out");
    }

    public function testAFileThatIsNotThisRequestsUploadIsNeverValid(): void
    {
        file_put_contents("$this->dir/t1", 'one');
        $owner = self::request(['method' => 'POST', 'parsed' => true, 'files' => [['doc', 'a.txt', 'text/plain', "$this->dir/t1", 0, 3]]]);
        $this->assertTrue($this->bridge()->request($owner)->files->get('doc')->isValid());

        $stranger = new UploadedFile(self::request(['method' => 'POST']), "$this->dir/t1", 'a.txt');
        $this->assertFalse($stranger->isValid(), 'only the request the server gave the file to may move it');
        $this->expectException(FileException::class);
        $stranger->move("$this->dir/out");
    }

    public function testResponseHeadersCookiesAndReasonPhrase(): void
    {
        $response = new SymfonyResponse('body', 299);
        $response->setStatusCode(299, 'Mostly Fine');
        $response->headers->set('X-Multi', ['a', 'b']);
        $response->headers->setCookie(Cookie::create('c', 'v 1', 0, '/p', null, true, true, false, 'none'));
        $answer = $this->bridge()->response($response);

        $this->assertSame(299, $answer->getStatus());
        $this->assertSame('Mostly Fine', $answer->getReason());
        $this->assertSame(['a', 'b'], $answer->getHeader('X-Multi'));
        $this->assertSame(['c=v%201; path=/p; secure; httponly; samesite=none'], $answer->getHeader('Set-Cookie'));
        $this->assertSame('body', $answer->body);
    }

    public function testStreamedResponseBecomesTheBody(): void
    {
        $level = ob_get_level();
        $answer = $this->bridge()->response(new StreamedResponse(static function (): void {
            echo 'a';
            flush();
            echo 'b';
        }, 202));
        $this->assertSame($level, ob_get_level());
        $this->assertSame([202, 'ab', null], [$answer->getStatus(), $answer->body, $answer->getFile()]);
    }

    public function testFileResponseIsAFileTheServerSends(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'ferry-bridge-');
        file_put_contents($path, 'file contents');
        try {
            $request = \Symfony\Component\HttpFoundation\Request::create('/', 'GET', server: ['HTTP_RANGE' => 'bytes=5-7']);
            $file = (new \Symfony\Component\HttpFoundation\BinaryFileResponse($path))->prepare($request);
            $answer = $this->bridge()->response($file);
            $this->assertSame(206, $answer->getStatus());
            $this->assertSame('', $answer->body);
            $this->assertSame(['path' => realpath($path), 'offset' => 5, 'delete' => false, 'length' => 3], $answer->getFile());
            $this->assertSame(['bytes 5-7/13'], $answer->getHeader('Content-Range'));
        } finally {
            unlink($path);
        }
    }
}
