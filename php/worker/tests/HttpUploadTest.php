<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests;

use Ferry\Worker\Http\Request;
use PHPUnit\Framework\TestCase;

/**
 * Request::moveUploadedFile()/isUploadedFile(), the worker's move_uploaded_file() and
 * is_uploaded_file(), on real files.
 */
final class HttpUploadTest extends TestCase
{
    /** @var list<string> */
    private array $dirs = [];

    protected function tearDown(): void
    {
        foreach ($this->dirs as $dir) {
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
        }
    }

    private function dir(string $parent): string
    {
        $dir = $parent . '/ferry-upload-' . bin2hex(random_bytes(6));
        mkdir($dir);
        $this->dirs[] = $dir;

        return $dir;
    }

    /**
     * @param list<string> $paths temp files the server would have written
     */
    private static function request(array $paths): Request
    {
        $files = [];
        foreach ($paths as $i => $path) {
            $files[] = ["f$i", "f$i.txt", 'text/plain', $path, UPLOAD_ERR_OK, (int) @filesize($path)];
        }
        $files[] = ['none', '', '', '', UPLOAD_ERR_NO_FILE, 0];

        return Request::fromContext(HttpRequestTest::context(['method' => 'POST', 'files' => $files, 'parsed' => true]), '');
    }

    public function testPhpsOwnFunctionsRefuseTheServersUploads(): void
    {
        $tmp = $this->dir(sys_get_temp_dir());
        file_put_contents("$tmp/up", 'data');
        // Why the Request methods exist: PHP did not receive these files itself.
        self::assertFalse(is_uploaded_file("$tmp/up"));
        self::assertFalse(@move_uploaded_file("$tmp/up", "$tmp/moved"));
        self::assertTrue(self::request(["$tmp/up"])->isUploadedFile("$tmp/up"));
    }

    public function testMovesAnUploadOnceWithTheUsualPermissions(): void
    {
        $tmp = $this->dir(sys_get_temp_dir());
        $dest = $this->dir(sys_get_temp_dir());
        file_put_contents("$tmp/up", 'payload');
        chmod("$tmp/up", 0600);
        $request = self::request(["$tmp/up"]);

        self::assertTrue($request->moveUploadedFile($request->files()['f0']['tmp_name'], "$dest/kept.txt"));
        self::assertSame('payload', file_get_contents("$dest/kept.txt"));
        self::assertFileDoesNotExist("$tmp/up");
        self::assertSame(0666 & ~umask(), fileperms("$dest/kept.txt") & 0777);
        self::assertFalse($request->isUploadedFile("$tmp/up"), 'moved files are no longer uploads');
        self::assertFalse($request->moveUploadedFile("$tmp/up", "$dest/again.txt"));
    }

    public function testRefusesPathsThatAreNotThisRequestsUploads(): void
    {
        $tmp = $this->dir(sys_get_temp_dir());
        file_put_contents("$tmp/up", 'u');
        file_put_contents("$tmp/secret", 's');
        $request = self::request(["$tmp/up"]);

        self::assertFalse($request->moveUploadedFile("$tmp/secret", "$tmp/stolen"));
        self::assertFalse($request->moveUploadedFile("$tmp/./up", "$tmp/stolen"), 'only the exact tmp_name counts');
        self::assertFalse($request->moveUploadedFile('', "$tmp/stolen"), 'an empty file input has no file');
        self::assertFalse(self::request([])->moveUploadedFile("$tmp/up", "$tmp/stolen"), 'another request\'s upload');
        self::assertFileExists("$tmp/secret");
        self::assertFileExists("$tmp/up");
        self::assertFileDoesNotExist("$tmp/stolen");
    }

    public function testMovesAcrossFilesystems(): void
    {
        if (!is_dir('/dev/shm') || !is_writable('/dev/shm') || stat('/dev/shm')['dev'] === stat(sys_get_temp_dir())['dev']) {
            self::markTestSkipped('needs /dev/shm on another filesystem than ' . sys_get_temp_dir());
        }
        $tmp = $this->dir(sys_get_temp_dir());
        $dest = $this->dir('/dev/shm');
        file_put_contents("$tmp/up", str_repeat('x', 100000));
        $request = self::request(["$tmp/up"]);
        self::assertTrue($request->moveUploadedFile("$tmp/up", "$dest/far"));
        self::assertSame(100000, filesize("$dest/far"));
        self::assertFileDoesNotExist("$tmp/up");
    }

    public function testAFailedMoveWarnsAndKeepsTheUpload(): void
    {
        $tmp = $this->dir(sys_get_temp_dir());
        file_put_contents("$tmp/up", 'u');
        $request = self::request(["$tmp/up"]);
        $warnings = [];
        set_error_handler(static function (int $level, string $message) use (&$warnings): bool {
            $warnings[] = $message;

            return true;
        }, E_USER_WARNING);
        try {
            self::assertFalse($request->moveUploadedFile("$tmp/up", "$tmp/missing-dir/x"));
        } finally {
            restore_error_handler();
        }
        self::assertSame(["Unable to move \"$tmp/up\" to \"$tmp/missing-dir/x\""], $warnings);
        self::assertTrue($request->isUploadedFile("$tmp/up"));
        self::assertFileExists("$tmp/up");
    }
}
