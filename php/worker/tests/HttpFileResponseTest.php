<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Response;
use PHPUnit\Framework\TestCase;

final class HttpFileResponseTest extends TestCase
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = (string) tempnam(sys_get_temp_dir(), 'ferry-test-');
        file_put_contents($this->path, 'abcdef');
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    public function testFileAnswerContext(): void
    {
        $r = Response::file($this->path, 'text/plain', 2, 3, true);
        $context = json_decode($r->context(), true);
        self::assertSame(['path' => $this->path, 'offset' => 2, 'delete' => true, 'length' => 3], $context['file']);
        self::assertSame(['text/plain'], $context['headers']['Content-Type']);
        self::assertSame('', $r->body);
        $whole = json_decode(Response::file($this->path)->context(), true)['file'];
        self::assertArrayNotHasKey('length', $whole, 'no length means to the end of the file');
    }

    /** @return iterable<string, array{\Closure(string): mixed, string}> */
    public static function badFiles(): iterable
    {
        yield 'relative' => [static fn (string $p) => Response::file('x.txt'), 'absolute'];
        yield 'missing' => [static fn (string $p) => Response::file($p . '.none'), 'not a readable regular file'];
        yield 'directory' => [static fn (string $p) => Response::file(\dirname($p)), 'not a readable regular file'];
        yield 'past the end' => [static fn (string $p) => Response::file($p, offset: 4, length: 3), 'past its size'];
        yield 'negative offset' => [static fn (string $p) => Response::file($p, offset: -1), 'past its size'];
    }

    /** @dataProvider badFiles */
    public function testBadFilesAreRefused(\Closure $build, string $message): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage($message);
        $build($this->path);
    }

    public function testWriteToAFileResponseThrows(): void
    {
        $this->expectException(\LogicException::class);
        Response::file($this->path)->write('x');
    }

    public function testSmallOutputStaysInMemory(): void
    {
        $level = ob_get_level();
        $r = Response::fromOutput(static function (): void { echo 'hello ', 'world'; }, 201, ['X-A' => 'b']);
        self::assertSame('hello world', $r->body);
        self::assertNull($r->getFile());
        self::assertSame(201, $r->getStatus());
        self::assertSame(['b'], $r->getHeader('X-A'));
        self::assertSame($level, ob_get_level());
    }

    public function testLargeOutputIsSpooledToAFileTheServerDeletes(): void
    {
        $chunk = str_repeat('z', 100_000);
        $r = Response::fromOutput(static function () use ($chunk): void {
            for ($i = 0; $i < 30; $i++) {
                echo $chunk;
            }
        });
        $file = $r->getFile();
        self::assertNotNull($file);
        self::assertTrue($file['delete']);
        self::assertSame(3_000_000, filesize($file['path']));
        self::assertSame(str_repeat($chunk, 30), file_get_contents($file['path']));
        unlink($file['path']);
    }

    public function testOutputIsSpooledInTheDirectoryTheServerNames(): void
    {
        $dir = sys_get_temp_dir() . '/ferry-spool-test-' . bin2hex(random_bytes(4));
        mkdir($dir);
        putenv("FERRY_SPOOL_DIR=$dir");
        try {
            $r = self::spooled();
            $file = $r->getFile();
            self::assertNotNull($file);
            // The server removes this directory once the worker has exited, so a worker
            // killed before it answered leaves no file anywhere.
            self::assertSame($dir, \dirname($file['path']));
            self::assertStringStartsWith('ferry-out-', basename($file['path']));
            unlink($file['path']);
            rmdir($dir);
            // A directory that has gone (the worker outlived it) is not an error.
            $file = self::spooled()->getFile();
            self::assertNotNull($file);
            self::assertSame(realpath(sys_get_temp_dir()), realpath(\dirname($file['path'])));
            unlink($file['path']);
        } finally {
            putenv('FERRY_SPOOL_DIR');
            @rmdir($dir);
        }
    }

    public function testOutsideFerryOutputIsSpooledInTheTempDir(): void
    {
        self::assertFalse(getenv('FERRY_SPOOL_DIR'), 'the suite runs outside a server');
        $file = self::spooled()->getFile();
        self::assertNotNull($file);
        self::assertSame(realpath(sys_get_temp_dir()), realpath(\dirname($file['path'])));
        unlink($file['path']);
    }

    private static function spooled(): Response
    {
        return Response::fromOutput(static function (): void {
            echo str_repeat('s', Response::SPOOL_THRESHOLD + 1);
        });
    }

    public function testAThrowingEmitterLeavesNoBufferNorFile(): void
    {
        $level = ob_get_level();
        $before = glob(sys_get_temp_dir() . '/ferry-out-*');
        try {
            Response::fromOutput(static function (): void {
                echo str_repeat('y', Response::SPOOL_THRESHOLD + 10);
                ob_flush();
                throw new \RuntimeException('boom');
            });
            self::fail('the exception was swallowed');
        } catch (\RuntimeException $e) {
            self::assertSame('boom', $e->getMessage());
        }
        self::assertSame($level, ob_get_level());
        self::assertSame($before, glob(sys_get_temp_dir() . '/ferry-out-*'));
    }
}
