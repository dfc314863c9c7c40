<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\HttpFoundation\FerryUpload;
use Ferry\Worker\Http\Request as FerryRequest;

/**
 * An upload received by the Ferry server, as Laravel's UploadedFile (store(), hashName()
 * and the rest): validity and moving go through the Ferry request (see FerryUpload).
 */
final class UploadedFile extends \Illuminate\Http\UploadedFile
{
    use FerryUpload;

    public function __construct(
        string $path,
        string $originalName,
        ?string $mimeType,
        int $error,
        FerryRequest $ferryRequest,
    ) {
        $this->ferryRequest = $ferryRequest;
        parent::__construct($path, $originalName, $mimeType, $error, false);
    }

    public static function make(FerryRequest $request, string $path, string $originalName, ?string $mimeType, int $error): self
    {
        return new self($path, $originalName, $mimeType, $error, $request);
    }
}
