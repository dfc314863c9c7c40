<?php

declare(strict_types=1);

namespace Ferry\Worker\Internal;

use Ferry\Worker\Frame;
use Ferry\Worker\FrameCodec;
use Ferry\Worker\Loop;
use Ferry\Worker\Relay\RelayClosedException;

/**
 * @internal A session's streamed answers (docs/protocol.md, "Streamed answers"): their parts
 * go out as STREAM frames, and the server's STOP for one (its client left) is noticed
 * without blocking, so the producer can stop.
 */
final class StreamParts
{
    public function __construct(private readonly WorkerSession $session)
    {
    }

    /**
     * Sends one part of job $id's answer now (a STREAM frame, docs/protocol.md "Streamed
     * answers"); false, with nothing sent, once the server has stopped the job.
     */
    public function send(int $id, string $context, string $body): bool
    {
        if (!$this->wanted($id)) {
            return false;
        }
        $this->session->streams[$id] ??= false;
        $max = $this->session->codec->maxPayload;
        do {
            // A part over the frame limit goes as several frames: the server only
            // sees bytes.
            $take = max(0, $max - \strlen($context));
            $this->session->outbox .= FrameCodec::encode(Frame::CODEC_RAW, [\strlen($context), $id], $context . substr($body, 0, $take), Frame::STREAM);
            $body = (string) substr($body, $take);
            $context = '';
            $this->session->flush();
        } while ($body !== '');
        if ($this->session->fibers && $this->session->loop instanceof Loop && \Fiber::getCurrent() !== null) {
            // A generator that blocks between parts (usleep, a blocking client) never
            // suspends, and only the runner reads the relay in Fiber mode: the STOP that
            // ends this stream (its client gone, a reload, a shutdown) would never be
            // seen. One turn of the loop per part reads it.
            $this->session->loop->wait(0.0);
        }

        return true;
    }

    /**
     * Whether the server still wants job $id's answer parts (false after a STOP frame
     * for it, or a stop in direct mode, or when the relay has closed). Looks at what the server sent without
     * blocking.
     */
    public function wanted(int $id): bool
    {
        if (!$this->session->fibers && !$this->session->closed) {
            // In Fiber mode the runner reads while jobs run and dispatches the STOP.
            $in = $this->session->relay->readStream();
            // Bytes ext/ferry's loop read ahead come before anything read here; without its
            // buffer in the session, the running loop reads no more (the relay is ours now).
            $ahead = $this->session->takeReadAhead();
            $this->session->readAhead = null;
            if ($ahead !== '') {
                $this->session->parser->push($ahead);
                $this->session->dispatch($this->session->parser->drain());
            }
            $read = [$in];
            $write = $except = null;
            while (!$this->session->closed && @stream_select($read, $write, $except, 0) > 0) {
                try {
                    $this->session->parser->push($this->session->relay->read());
                } catch (RelayClosedException) {
                    $this->session->closed = true;
                }
                $this->session->dispatch($this->session->parser->drain());
                $read = [$in];
            }
        }

        // In direct mode the server cannot STOP a stream it never saw: its stop (a shutdown, a
        // reload, ttl) ends them all after their next part, as the front ends its own then. One
        // that starts on a draining worker's kept-alive connection still sends its first part,
        // so that its client gets an answer (with Connection: close) and comes back elsewhere.
        if ($this->session->direct && $this->session->stopping && isset($this->session->streams[$id])) {
            return false;
        }

        return !$this->session->closed && !($this->session->streams[$id] ?? false);
    }
}
