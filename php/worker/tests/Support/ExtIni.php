<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests\Support;

use PHPUnit\Framework\Assert;

/**
 * Worker processes with ext/ferry loaded, whatever PHPUnit itself loaded: an ini scan
 * directory with the built ferry.so, made once per run and removed at exit.
 */
final class ExtIni
{
    private static ?string $dir = null;

    /**
     * PHP_INI_SCAN_DIR for a worker: a leading separator keeps the default scan directory
     * and adds ours, after any the test run set (memcheck_sdk.sh turns PCRE's JIT off that way).
     * Skips the test when the extension is not built, and fails it when FERRY_TEST_EXT=1
     * says it must be. FERRY_EXT_SO names the build for another PHP (make test-matrix
     * builds one for PHP 8.4 beside the 8.2 one).
     */
    public static function scanDir(): string
    {
        if (self::$dir === null) {
            self::$dir = '';
            $so = getenv('FERRY_EXT_SO') ?: \dirname(__DIR__, 4) . '/ext/ferry/.build/modules/ferry.so';
            if (is_file($so)) {
                $dir = sys_get_temp_dir() . '/ferry-ext-ini-' . bin2hex(random_bytes(6));
                mkdir($dir);
                file_put_contents("$dir/ferry.ini", "extension=$so\n");
                register_shutdown_function(static function () use ($dir): void {
                    @unlink("$dir/ferry.ini");
                    @rmdir($dir);
                });
                self::$dir = $dir;
            }
        }
        if (self::$dir === '') {
            if (getenv('FERRY_TEST_EXT') === '1') {
                Assert::fail('ext/ferry\'s ferry.so is missing although FERRY_TEST_EXT=1');
            }
            // Not SkippedTestError: PHPUnit 10 removed it; this works from 9.6 on.
            Assert::markTestSkipped('ext/ferry is not built (make build-ext)');
        }

        return (getenv('PHP_INI_SCAN_DIR') ?: '') . PATH_SEPARATOR . self::$dir;
    }
}
