<?php

declare(strict_types=1);

// Stands in for vendor/autoload.php: without Composer, Symfony comes from Debian's
// packages (php-symfony-framework-bundle, php-symfony-runtime) under /usr/share/php, and
// ferry/symfony-runtime from this checkout. With Composer, none of this file exists.
require_once '/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php';
require_once '/usr/share/php/Symfony/Component/Runtime/autoload.php';
// The app's file responses guess types with symfony/mime, which Debian's 6.4 bundle does
// not load for it as 5.4's did.
require_once '/usr/share/php/Symfony/Component/Mime/autoload.php';
// Composer 2's vendor/autoload.php always has this class, and Symfony 6 refuses to build
// its container without it ("installed with Composer 1"). Debian's composer package has it.
if (is_file('/usr/share/php/Composer/InstalledVersions.php')) {
    require_once '/usr/share/php/Composer/InstalledVersions.php';
}
require_once dirname(__DIR__, 2) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
