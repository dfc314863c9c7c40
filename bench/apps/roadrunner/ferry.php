<?php

declare(strict_types=1);

// app.php on Ferry's own protocol and PSR-7 bridge.

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Psr7\Psr7Worker;

Psr7Worker::create()->run(require __DIR__ . '/app.php');
