<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation;

use Ferry\Worker\Http\Request;
use Symfony\Component\HttpFoundation\File\UploadedFile as SymfonyUploadedFile;

/**
 * Symfony's UploadedFile for an upload the Ferry server received: isValid() and move()
 * ask the Ferry request (see FerryUpload).
 */
class UploadedFile extends SymfonyUploadedFile
{
    use FerryUpload;

    public function __construct(
        Request $request,
        string $path,
        string $originalName,
        ?string $mimeType = null,
        ?int $error = null,
    ) {
        $this->ferryRequest = $request;
        parent::__construct($path, $originalName, $mimeType, $error);
    }
}
