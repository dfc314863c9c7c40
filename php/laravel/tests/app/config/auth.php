<?php

declare(strict_types=1);

return [
    'defaults' => ['guard' => 'web', 'passwords' => 'users'],
    'guards' => [
        'web' => ['driver' => 'session', 'provider' => 'users'],
    ],
    // No database needed: App\Auth\MemoryUserProvider serves these two users.
    'providers' => [
        'users' => [
            'driver' => 'memory',
            'users' => [
                1 => ['id' => 1, 'name' => 'alice'],
                2 => ['id' => 2, 'name' => 'bob'],
            ],
        ],
    ],
];
