<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation\Tests;

use Ferry\Laravel\Http\RequestBridge;
use Ferry\Laravel\Http\ResponseBridge;
use Ferry\Laravel\Http\UploadedFile as LaravelUploadedFile;
use Ferry\Symfony\Bridge as SymfonyBridge;
use Ferry\Symfony\UploadedFile as SymfonyUploadedFile;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
use Ferry\Worker\Http\Status;
use PHPUnit\Framework\TestCase;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\File\Exception\IniSizeFileException;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;

/**
 * Where php/symfony's and php/laravel's bridges used to disagree, both now do what the
 * application gets under PHP-FPM behind nginx: each test runs through both frameworks'
 * adapters, so neither can drift from the other again.
 */
final class FpmParityTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/ferry-httpfoundation-parity-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    /** @return array<string, array{string}> */
    public static function frameworks(): array
    {
        return ['symfony' => ['symfony'], 'laravel' => ['laravel']];
    }

    /** @param array<string, mixed> $processServer */
    private static function toFramework(string $framework, Request $request, array $processServer = []): SymfonyRequest
    {
        return $framework === 'symfony'
            ? (new SymfonyBridge('/srv/app/public/index.php', $processServer))->request($request)
            : (new RequestBridge('/srv/app/public', $processServer))->toLaravel($request);
    }

    private static function toFerry(string $framework, SymfonyResponse $response): Response
    {
        return $framework === 'symfony' ? (new SymfonyBridge('/srv/app/public/index.php', []))->response($response) : ResponseBridge::toFerry($response);
    }

    /** @param array<string, mixed> $context */
    private static function request(array $context, string $body = ''): Request
    {
        return Request::fromContext(serialize($context + ['method' => 'GET', 'uri' => '/', 'path' => '/']), $body);
    }

    /**
     * Laravel's bridge used to give no process environment at all, where FPM puts its
     * env[] in every request's server parameters; Symfony's kept it, minus what would pose
     * as a request header or as the request's own body.
     *
     * @dataProvider frameworks
     */
    public function testTheProcessEnvironmentIsThereButNeverAsARequestHeader(string $framework): void
    {
        $request = self::toFramework($framework, self::request(['headers' => ['Accept' => ['text/html']]]), [
            'APP_SECRET' => 's3', 'HTTP_PROXY' => 'http://evil:3128', 'CONTENT_TYPE' => 'x/y', 'CONTENT_LENGTH' => '9',
            'argv' => ['public/index.php'], 'argc' => 1, 'PATH_TRANSLATED' => '/x',
        ]);
        self::assertSame('s3', $request->server->get('APP_SECRET'));
        self::assertFalse($request->server->has('HTTP_PROXY'));
        self::assertFalse($request->headers->has('Proxy'));
        self::assertFalse($request->headers->has('Content-Type'));
        self::assertFalse($request->headers->has('Content-Length'));
        self::assertSame([false, false, false], [$request->server->has('argv'), $request->server->has('argc'), $request->server->has('PATH_TRANSLATED')]);
        self::assertSame('text/html', $request->headers->get('Accept'));
    }

    /**
     * The two set the script's parameters differently (Laravel: PHP_SELF /index.php and no
     * PATH_INFO). php/symfony's tests pinned PATH_INFO and PHP_SELF as below, and the
     * renovation keeps every assertion, so both follow them.
     *
     * @dataProvider frameworks
     */
    public function testScriptParameters(string $framework): void
    {
        $request = self::toFramework($framework, self::request(['uri' => '/shop/cart?x=1', 'path' => '/shop/cart', 'query' => 'x=1']));
        self::assertSame(['/index.php', '/index.php/shop/cart', '/shop/cart'], [
            $request->server->get('SCRIPT_NAME'), $request->server->get('PHP_SELF'), $request->server->get('PATH_INFO'),
        ]);
        self::assertSame(['/srv/app/public/index.php', '/srv/app/public'], [$request->server->get('SCRIPT_FILENAME'), $request->server->get('DOCUMENT_ROOT')]);
        self::assertSame(['', '/shop/cart'], [$request->getBaseUrl(), $request->getPathInfo()]);
    }

    /**
     * A body the server spooled stays a file that HttpFoundation reads lazily. A multipart
     * body the server parsed into fields and files is empty, as php://input is under FPM:
     * Symfony's bridge used to read the whole spooled upload into memory as the content,
     * Laravel's to hand it over as a stream.
     *
     * @dataProvider frameworks
     */
    public function testASpooledBodyIsAStreamAndAParsedOneIsEmpty(string $framework): void
    {
        file_put_contents("$this->dir/body", 'name=spooled');
        $request = self::toFramework($framework, self::request(['method' => 'POST', 'body_file' => "$this->dir/body", 'headers' => ['Content-Type' => ['application/x-www-form-urlencoded']]]));
        self::assertIsResource($request->getContent(true));
        self::assertSame('name=spooled', $request->getContent());
        self::assertSame('spooled', $request->request->get('name'));

        file_put_contents("$this->dir/multipart", str_repeat('m', 100000));
        file_put_contents("$this->dir/t1", 'one');
        $request = self::toFramework($framework, self::request([
            'method' => 'POST', 'parsed' => true, 'body_file' => "$this->dir/multipart",
            'headers' => ['Content-Type' => ['multipart/form-data; boundary=b']],
            'form' => [['title', 'docs']], 'files' => [['doc', 'a.txt', 'text/plain', "$this->dir/t1", 0, 3]],
        ]));
        self::assertSame('', $request->getContent());
        self::assertSame('docs', $request->request->get('title'));
        self::assertSame('one', file_get_contents($request->files->get('doc')->getPathname()));
    }

    /**
     * The server writes its own Date (fasthttp replaces a worker's, the HTTP/2 path drops
     * it): Symfony's bridge used to forward the response's, bytes that never reach the client.
     *
     * @dataProvider frameworks
     */
    public function testTheServerWritesTheDate(string $framework): void
    {
        $response = new SymfonyResponse('x');
        self::assertTrue($response->headers->has('Date'), 'HttpFoundation sets one');
        self::assertSame([], self::toFerry($framework, $response)->getHeader('Date'));
    }

    /**
     * PHP adds its default type when the application sent none, from the ini settings of
     * the moment; Symfony's bridge used to add nothing (and the server then wrote its own
     * default, whatever default_mimetype said).
     *
     * @dataProvider frameworks
     */
    public function testPhpsDefaultContentTypeWhenTheApplicationSetNone(string $framework): void
    {
        $response = new SymfonyResponse('x');
        $response->headers->remove('Content-Type');
        self::assertSame(['text/html; charset=UTF-8'], self::toFerry($framework, $response)->getHeader('Content-Type'));

        $mimetype = ini_get('default_mimetype');
        $charset = ini_get('default_charset');
        try {
            ini_set('default_mimetype', 'application/xml');
            self::assertSame(['application/xml'], self::toFerry($framework, $response)->getHeader('Content-Type'), 'charset only for text/*');
            ini_set('default_mimetype', 'text/plain');
            ini_set('default_charset', 'ISO-8859-1');
            self::assertSame(['text/plain; charset=ISO-8859-1'], self::toFerry($framework, $response)->getHeader('Content-Type'));
            ini_set('default_mimetype', '');
            self::assertSame([], self::toFerry($framework, $response)->getHeader('Content-Type'), 'as Symfony sets it for a 204');
        } finally {
            ini_set('default_mimetype', (string) $mimetype);
            ini_set('default_charset', (string) $charset);
        }

        $response->headers->set('Content-Type', 'image/png');
        self::assertSame(['image/png'], self::toFerry($framework, $response)->getHeader('Content-Type'));
    }

    /**
     * Under FPM the phrase the response holds is on the Status line and nginx keeps it,
     * the framework's own standard phrase included: Laravel's bridge used to drop that one
     * for the server's, different words for 413. A phrase with a control character is
     * dropped, as PHP's header() drops it: Laravel's bridge used to throw, a 500.
     *
     * @dataProvider frameworks
     */
    public function testTheReasonPhrase(string $framework): void
    {
        $standard = SymfonyResponse::$statusTexts[413];
        self::assertNotSame(Status::reason(413), $standard, 'the test needs a status whose phrases differ');
        self::assertSame($standard, self::toFerry($framework, new SymfonyResponse('', 413))->getReason());

        $response = new SymfonyResponse('', 299);
        $response->setStatusCode(299, "Mostly\x01Fine");
        $answer = self::toFerry($framework, $response);
        self::assertSame([299, ''], [$answer->getStatus(), $answer->getReason()]);

        $response->setStatusCode(404, 'Nowhere');
        self::assertSame('Nowhere', self::toFerry($framework, $response)->getReason());
    }

    private function upload(string $framework, Request $request, string $path, int $error): \Symfony\Component\HttpFoundation\File\UploadedFile
    {
        return $framework === 'symfony'
            ? new SymfonyUploadedFile($request, $path, 'a.txt', 'text/plain', $error)
            : new LaravelUploadedFile($path, 'a.txt', 'text/plain', $error, $request);
    }

    /**
     * An upload error gets Symfony's own exception for it, as Symfony's move() throws
     * under FPM: Laravel's used to throw a plain FileException.
     *
     * @dataProvider frameworks
     */
    public function testAnUploadErrorHasItsOwnException(string $framework): void
    {
        $request = self::request(['method' => 'POST', 'parsed' => true, 'files' => [['big', 'huge.iso', 'application/octet-stream', '', UPLOAD_ERR_INI_SIZE, 0]]]);
        $big = self::toFramework($framework, $request)->files->get('big');
        self::assertInstanceOf($framework === 'symfony' ? SymfonyUploadedFile::class : LaravelUploadedFile::class, $big);
        $this->expectException(IniSizeFileException::class);
        $big->move("$this->dir/out");
    }

    /**
     * A failed move's warning becomes the exception's message, caught as Symfony's move()
     * catches it: the application's error handler never sees it and error_get_last() is
     * left as it was. Laravel's used to silence it with @ and read error_get_last(), so
     * the application's handler ran and the warning stayed behind.
     *
     * @dataProvider frameworks
     */
    public function testAFailedMoveKeepsItsWarningToItself(string $framework): void
    {
        file_put_contents("$this->dir/t1", 'one');
        $request = self::request(['method' => 'POST', 'parsed' => true, 'files' => [['doc', 'a.txt', 'text/plain', "$this->dir/t1", 0, 3]]]);
        $file = $this->upload($framework, $request, "$this->dir/t1", UPLOAD_ERR_OK);
        // The target is a directory that is not empty: neither rename() nor copy() can replace it.
        mkdir("$this->dir/out/taken", 0777, true);
        touch("$this->dir/out/taken/x");

        $seen = [];
        set_error_handler(static function (int $type, string $message) use (&$seen): bool {
            $seen[] = $message;

            return true;
        });
        error_clear_last();
        try {
            $file->move("$this->dir/out", 'taken');
            self::fail('moved onto a directory');
        } catch (FileException $e) {
            self::assertStringContainsString("Unable to move \"$this->dir/t1\" to \"$this->dir/out/taken\"", $e->getMessage());
        } finally {
            restore_error_handler();
        }
        self::assertSame([], $seen, 'the application\'s error handler');
        self::assertNull(error_get_last());
        self::assertTrue($file->isValid(), 'still this request\'s upload, movable elsewhere');
        self::assertSame('one', file_get_contents($file->move("$this->dir/out", 'kept.txt')->getPathname()));
    }
}
