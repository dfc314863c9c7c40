<?php

declare(strict_types=1);

namespace Ferry\HttpFoundation;

use Ferry\Worker\Http\Response;
use Symfony\Component\HttpFoundation\BinaryFileResponse;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Symfony\Component\HttpFoundation\StreamedResponse;

/**
 * The body of an HttpFoundation response (Symfony, Laravel) as Ferry sends it: a file
 * download becomes a file the server reads itself, a streamed response is spooled
 * (Response::output()), anything else is the content string. Neither of the first two
 * is ever held whole in PHP's memory.
 */
final class Body
{
    public static function attach(SymfonyResponse $response, Response $answer): void
    {
        if ($response instanceof BinaryFileResponse && $response->isSuccessful()) {
            // prepare() has settled the range (offset, maxlen) and whether to delete.
            [$offset, $maxlen, $delete] = (fn (): array => [$this->offset, $this->maxlen, $this->deleteFileAfterSend])->call($response);
            $path = $response->getFile()->getPathname();
            $size = (int) filesize($path);
            if ($maxlen === 0 || $offset >= $size) {
                $answer->body = '';
                if ($delete) {
                    @unlink($path);
                }

                return;
            }
            $answer->sendFile(realpath($path) ?: $path, $offset, $maxlen < 0 ? null : min($maxlen, $size - $offset), $delete);

            return;
        }
        if ($response instanceof StreamedResponse || $response instanceof BinaryFileResponse) {
            $answer->output(static function () use ($response): void {
                $response->sendContent();
            });

            return;
        }
        $answer->body = (string) $response->getContent();
    }
}
