<?php

declare(strict_types=1);

// Helpers of the legacy app. Loaded with require_once: under Ferry the worker keeps the
// functions from one request to the next, and declaring them twice would be fatal.

function h(string $s): string
{
    return htmlspecialchars($s, ENT_QUOTES);
}

function page(string $title, string $body): void
{
    echo "<!doctype html>\n<title>", h($title), "</title>\n<h1>", h($title), "</h1>\n", $body, "\n";
}
