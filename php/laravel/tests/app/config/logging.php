<?php

declare(strict_types=1);

use Monolog\Handler\StreamHandler;

return [
    // stderr is Ferry's log under Ferry and the error log under FPM.
    'default' => 'stderr',
    'channels' => [
        'stderr' => [
            'driver' => 'monolog',
            'handler' => StreamHandler::class,
            'with' => ['stream' => 'php://stderr'],
        ],
        'buffered' => [
            'driver' => 'custom',
            'via' => App\Logging\BufferedLogger::class,
            'path' => storage_path('logs/buffered.log'),
        ],
    ],
];
