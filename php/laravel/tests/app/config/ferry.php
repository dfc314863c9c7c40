<?php

declare(strict_types=1);

return [
    // Resolved once at boot and shared by every request (the worker resets their
    // per-request state); null keeps Ferry's default list.
    'warm' => null,
    // Resolved at boot but rebuilt for every request.
    'scoped' => [App\Services\BootCounter::class],
];
