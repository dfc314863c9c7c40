<?php

declare(strict_types=1);

use App\Kernel;

// The front controller of Symfony's recipe; only the runtime autoloader's path differs
// (vendor/autoload_runtime.php in a Composer project).
require_once dirname(__DIR__) . '/autoload_runtime.php';

return function (array $context) {
    return new Kernel($context['APP_ENV'], (bool) $context['APP_DEBUG']);
};
