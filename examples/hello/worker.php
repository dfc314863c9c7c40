<?php

declare(strict_types=1);

// The smallest Ferry HTTP worker. Nothing may be printed before run(): STDOUT is the relay.
require __DIR__ . '/../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static fn (Request $request): Response => Response::text("Hello, world\n"));
