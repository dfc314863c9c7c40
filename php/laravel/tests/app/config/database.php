<?php

declare(strict_types=1);

return [
    // In-memory SQLite (php8.2-sqlite3): enough to prove that a transaction a request
    // leaves open is rolled back before the next one.
    'default' => 'sqlite',
    'connections' => [
        'sqlite' => ['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => ''],
    ],
    'migrations' => 'migrations',
];
