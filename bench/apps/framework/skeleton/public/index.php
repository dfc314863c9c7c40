<?php

declare(strict_types=1);

// FPM front controller: boots the whole application for every request.
$kernel = require __DIR__ . '/../bootstrap.php';

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
$response = $kernel->handle(new Framework\Http\Request($_SERVER['REQUEST_METHOD'] ?? 'GET', \is_string($path) ? $path : '/', $_GET, $_COOKIE));
http_response_code($response->status);
foreach ($response->headers as $name => $value) {
    header("$name: $value");
}
echo $response->body;
