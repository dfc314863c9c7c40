<?php

declare(strict_types=1);

namespace Ferry\Symfony;

use Ferry\Worker\Http\Request;
use Symfony\Component\HttpFoundation\File\Exception\FileException;
use Symfony\Component\HttpFoundation\File\File;
use Symfony\Component\HttpFoundation\File\UploadedFile as SymfonyUploadedFile;

/**
 * An upload received by the Ferry server. PHP did not receive it itself, so its
 * is_uploaded_file() and move_uploaded_file() refuse the temp file; isValid() and move()
 * ask the Ferry request instead, which accepts exactly this request's uploads.
 */
class UploadedFile extends SymfonyUploadedFile
{
    public function __construct(
        private readonly Request $request,
        string $path,
        string $originalName,
        ?string $mimeType = null,
        ?int $error = null,
    ) {
        parent::__construct($path, $originalName, $mimeType, $error);
    }

    public function isValid(): bool
    {
        return $this->getError() === \UPLOAD_ERR_OK && $this->request->isUploadedFile($this->getPathname());
    }

    /**
     * The return type is Symfony 6's; 5.4 declares none, and a narrower one is allowed.
     */
    public function move(string $directory, ?string $name = null): File
    {
        if (!$this->isValid()) {
            // Symfony's own exception for each upload error.
            return parent::move($directory, $name);
        }
        $target = $this->getTargetFile($directory, $name);
        $error = '';
        set_error_handler(static function (int $type, string $message) use (&$error): bool {
            $error = $message;

            return true;
        });
        try {
            $moved = $this->request->moveUploadedFile($this->getPathname(), $target->getPathname());
        } finally {
            restore_error_handler();
        }
        if (!$moved) {
            throw new FileException(sprintf('Could not move the file "%s" to "%s" (%s).', $this->getPathname(), $target->getPathname(), $error));
        }

        return $target;
    }
}
