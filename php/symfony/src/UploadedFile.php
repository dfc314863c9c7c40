<?php

declare(strict_types=1);

namespace Ferry\Symfony;

use Ferry\Worker\Http\Request;

/**
 * The uploads a Symfony application gets from Ferry: Symfony's UploadedFile whose
 * isValid() and move() work in a worker (php/httpfoundation's UploadedFile), under the
 * name this package has always given them.
 */
class UploadedFile extends \Ferry\HttpFoundation\UploadedFile
{
    public static function make(Request $request, string $path, string $originalName, ?string $mimeType, int $error): self
    {
        return new self($request, $path, $originalName, $mimeType, $error);
    }
}
