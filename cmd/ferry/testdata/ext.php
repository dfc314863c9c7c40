<?php

declare(strict_types=1);

// For extension_e2e_test.go: whether this worker has ext/ferry, and a header set with
// PHP's own header(), which reaches the answer only through the extension.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;

HttpWorker::create()->run(static function (): string {
    header('X-Php-Header: yes');

    return 'ferry=' . (extension_loaded('ferry') ? '1' : '0');
});
