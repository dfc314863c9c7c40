<?php

declare(strict_types=1);

namespace Ferry\Symfony;

/**
 * The HttpFoundation bridge (php/httpfoundation) as the Symfony runner uses it: uploads
 * are this package's UploadedFile.
 */
final class Bridge extends \Ferry\HttpFoundation\Bridge
{
    /**
     * @param string $frontController absolute path of public/index.php (or whatever the worker runs)
     * @param array<string, mixed>|null $processServer the worker's own $_SERVER (environment included)
     */
    public function __construct(string $frontController, ?array $processServer = null)
    {
        parent::__construct($frontController, $processServer, UploadedFile::make(...));
    }
}
