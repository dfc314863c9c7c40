<?php

declare(strict_types=1);

// opcache.preload for the hello app. There is nothing to link, so this only shows what
// preloading costs or gains when the script is already tiny.
opcache_compile_file(__DIR__ . '/index.php');
