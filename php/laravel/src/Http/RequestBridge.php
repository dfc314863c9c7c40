<?php

declare(strict_types=1);

namespace Ferry\Laravel\Http;

use Ferry\HttpFoundation\Bridge;
use Ferry\Worker\Http\Request as FerryRequest;
use Illuminate\Http\Request;

/**
 * Ferry's raw request to an Illuminate request, as Request::capture() would build it under
 * PHP-FPM behind nginx's try_files to public/index.php: the HttpFoundation bridge
 * (php/httpfoundation) with Laravel's request and upload classes.
 */
final class RequestBridge
{
    private readonly Bridge $bridge;

    /**
     * @param array<string, mixed>|null $processServer the worker's own $_SERVER (environment included)
     */
    public function __construct(string $publicPath, ?array $processServer = null)
    {
        $this->bridge = new Bridge($publicPath . '/index.php', $processServer, UploadedFile::make(...));
    }

    public function toLaravel(FerryRequest $ferry): Request
    {
        $request = $this->bridge->request($ferry, Request::class);
        // As Request::createFromBase() does for Request::capture(): JSON bodies are the input.
        $request->request = (fn () => $this->getInputSource())->call($request);

        return $request;
    }
}
