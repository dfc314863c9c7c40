<?php

declare(strict_types=1);

namespace Ferry\Worker\Tests\Support;

use Ferry\Worker\Frame;
use Ferry\Worker\Tests\HttpRequestTest;

/**
 * Builds HTTP jobs the way the gateway does and decodes the answers.
 */
final class Http
{
    /**
     * @param array<string, mixed> $context overrides of HttpRequestTest::context()
     */
    public static function job(int $id, string $uri, array $context = [], string $body = ''): string
    {
        [$path, $query] = explode('?', $uri, 2) + [1 => ''];

        return WorkerProcess::job($id, $body, HttpRequestTest::context($context + ['uri' => $uri, 'path' => $path, 'query' => $query]));
    }

    /**
     * @return array{id: int, status: int, headers: array<string, list<string>>, body: string}
     */
    public static function answer(Frame $frame): array
    {
        if ($frame->flags !== Frame::CODEC_RAW) {
            throw new \RuntimeException(sprintf('expected a CODEC_RAW answer, got flags 0x%02x: %s', $frame->flags, $frame->payload));
        }
        [$contextLength, $id] = $frame->options;
        $meta = json_decode(substr($frame->payload, 0, $contextLength), true, 8, JSON_THROW_ON_ERROR);

        return ['id' => $id, 'status' => $meta['status'], 'headers' => $meta['headers'], 'body' => substr($frame->payload, $contextLength)];
    }
}
