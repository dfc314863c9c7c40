<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation;

use Ferry\Worker\Http\Request;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\File\File;

/**
 * isValid() and move() for an UploadedFile (Symfony's or Illuminate's) that the Ferry
 * server received. PHP did not receive it itself, so its is_uploaded_file() and
 * move_uploaded_file() refuse the temp file; the Ferry request accepts exactly its own
 * uploads, each once. The class using this sets $ferryRequest in its constructor.
 */
trait FerryUpload
{
    private readonly Request $ferryRequest;

    public function isValid(): bool
    {
        return $this->getError() === \UPLOAD_ERR_OK && $this->ferryRequest->isUploadedFile($this->getPathname());
    }

    /**
     * As Symfony's own move() under FPM: each upload error has its exception, and the
     * warning of a failed move becomes the exception's message without reaching the
     * application's error handler or error_get_last().
     */
    public function move(string $directory, ?string $name = null): File
    {
        if (!$this->isValid()) {
            // Symfony's own exception for each upload error (isValid() above is what it asks).
            return parent::move($directory, $name);
        }
        $target = $this->getTargetFile($directory, $name);
        $error = '';
        set_error_handler(static function (int $type, string $message) use (&$error): bool {
            $error = $message;

            return true;
        });
        try {
            $moved = $this->ferryRequest->moveUploadedFile($this->getPathname(), $target->getPathname());
        } finally {
            restore_error_handler();
        }
        if (!$moved) {
            throw new FileException(sprintf('Could not move the file "%s" to "%s" (%s).', $this->getPathname(), $target->getPathname(), strip_tags($error)));
        }

        return $target;
    }
}
