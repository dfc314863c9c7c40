<?php

declare(strict_types=1);

// The Ferry worker for the legacy app: index.php runs once per request in this
// long-lived process, with PHP's own headers, cookies, sessions, uploads and exit()
// (needs ext/ferry; see docs/legacy.md).
require __DIR__ . '/../../php/worker/autoload.php';

Ferry\Worker\Http\HttpWorker::create()->runFrontController(__DIR__ . '/index.php');
