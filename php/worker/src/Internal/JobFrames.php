<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Internal\Output\OutputCapture;
use Ferry\Worker\Job;
use Ferry\Worker\Payload;

/**
 * @internal Job frames in, answer frames out (docs/protocol.md, "Jobs").
 */
final class JobFrames
{
    /** whether ext/ferry's frame writer is there */
    private static ?bool $ext = null;

    /**
     * Splits a job frame into a Job, or returns an ERROR frame if it is malformed.
     */
    public static function job(Frame $frame, OutputCapture $capture): Job|string
    {
        $contextLength = $frame->options[0] ?? 0;
        $id = $frame->options[1] ?? 0;
        $size = \strlen($frame->payload);
        if ($contextLength > $size) {
            return FrameCodec::encode(
                Frame::ERROR,
                [0, $id],
                "job $id: context length $contextLength exceeds the payload size $size"
            );
        }
        $payload = $contextLength === 0
            ? new Payload($frame->payload, '', $id)
            : new Payload(substr($frame->payload, $contextLength), substr($frame->payload, 0, $contextLength), $id);

        return new Job($payload, $capture);
    }

    /**
     * Encodes what a handler returned as the answer to job $id (an ERROR frame if too large).
     */
    public static function answer(mixed $answer, int $id, int $maxPayload): string
    {
        if ($answer instanceof Payload) {
            $context = $answer->context;
            $body = $answer->body;
        } elseif (\is_string($answer) || $answer === null) {
            $context = '';
            $body = (string) $answer;
        } else {
            $type = get_debug_type($answer);
            throw new \TypeError("job handler must return Payload, string or null, got $type");
        }
        $length = \strlen($context) + \strlen($body);
        if ($length > $maxPayload) {
            return FrameCodec::encode(Frame::ERROR, [0, $id], sprintf(
                'answer of %d bytes exceeds the maximum payload of %d bytes',
                $length,
                $maxPayload
            ));
        }
        // The length is checked above and ids come from our own frames.
        if (self::$ext ??= \function_exists('Ferry\Ext\job_answer')) {
            return \Ferry\Ext\job_answer($id, $context, $body);
        }

        return FrameCodec::job(\strlen($context), $id, $context === '' ? $body : $context . $body);
    }
}
