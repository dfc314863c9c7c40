<?php

declare(strict_types=1);

return [
    'default' => 'array',
    'stores' => [
        'array' => ['driver' => 'array', 'serialize' => false],
        'file' => ['driver' => 'file', 'path' => storage_path('framework/cache')],
    ],
    'prefix' => 'ferry_test',
];
