<?php

declare(strict_types=1);

namespace Ferry\Worker\Http;

/**
 * @internal How HttpWorker::runFrontController() runs a classic front controller once per
 * request (docs/legacy.md): the script's directory as working directory and the $_SERVER
 * entries nginx + php-fpm give it, then the script itself, with exit() ending only it.
 */
final class LegacyScript
{
    /**
     * @return \Closure(Request): string the handler; the answer comes from PHP's own state
     */
    public static function handler(string $path): \Closure
    {
        $dir = \dirname($path);
        // Bound to nothing and given no named parameter, so the script starts with an
        // empty local scope, as at the top of a file, and no $this.
        $run = static function (): void {
            require func_get_arg(0);
        };

        return static function () use ($path, $dir, $run): string {
            // php-fpm runs every script from its own directory: relative includes and
            // file paths resolve there whatever the application did to the cwd before.
            if (getcwd() !== $dir) {
                chdir($dir);
            }
            \Ferry\Ext\catch_exit(static fn () => $run($path));

            return '';
        };
    }

    /**
     * The script's entries of $_SERVER as nginx's fastcgi_params and `try_files $uri
     * /index.php?$query_string` set them (the SDK's globals mode fills the rest).
     */
    public static function server(string $path): void
    {
        $name = '/' . basename($path);
        $_SERVER['SCRIPT_FILENAME'] = $path;
        $_SERVER['SCRIPT_NAME'] = $name;
        $_SERVER['PHP_SELF'] = $name;
        $_SERVER['DOCUMENT_URI'] = $name;
        $_SERVER['DOCUMENT_ROOT'] = \dirname($path);
        $_SERVER['GATEWAY_INTERFACE'] = 'CGI/1.1';
        // A CLI's own entries that a web request never has.
        unset($_SERVER['PATH_INFO'], $_SERVER['argv'], $_SERVER['argc'], $_SERVER['PATH_TRANSLATED']);
    }
}
