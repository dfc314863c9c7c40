<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\Worker\Http\Request as FerryRequest;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\File\File;

/**
 * An upload received by the Ferry server. PHP's is_uploaded_file() and
 * move_uploaded_file() know nothing of it, so validity and moving go through the Ferry
 * request, which accepts only this request's temp files, each once.
 */
final class UploadedFile extends \Illuminate\Http\UploadedFile
{
    public function __construct(
        string $path,
        string $originalName,
        ?string $mimeType,
        int $error,
        private readonly FerryRequest $ferryRequest,
    ) {
        parent::__construct($path, $originalName, $mimeType, $error, false);
    }

    public function isValid(): bool
    {
        return $this->getError() === \UPLOAD_ERR_OK && $this->ferryRequest->isUploadedFile($this->getPathname());
    }

    public function move(string $directory, ?string $name = null): File
    {
        if (!$this->isValid()) {
            throw new FileException($this->getErrorMessage());
        }
        $target = $this->getTargetFile($directory, $name);
        // The SDK warns on failure; the message goes into the exception instead.
        if (!@$this->ferryRequest->moveUploadedFile($this->getPathname(), $target->getPathname())) {
            $why = error_get_last()['message'] ?? 'unknown error';
            throw new FileException(sprintf('Could not move the file "%s" to "%s" (%s).', $this->getPathname(), $target->getPathname(), $why));
        }

        return $target;
    }
}
