<?php

declare(strict_types=1);

// The smallest Ferry HTTP worker. The relay is on descriptors 3 and 4: what the app prints
// outside a request goes to the server log.
require __DIR__ . '/../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static fn (Request $request): Response => Response::text("Hello, world\n"));
