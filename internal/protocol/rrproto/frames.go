package rrproto

import (
	"bytes"
	"fmt"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/protocol"
)

// RoadRunner's worker protocol (spiral/roadrunner-worker), as far as the pool
// is concerned, differs from Ferry's in four ways:
//
//   - a job frame has one option, the context length, and the codec of its
//     context in the flags (PROTO or JSON);
//   - an answer has one option too and no job id: a worker reads one frame at
//     a time and answers in order, so the answer belongs to the oldest job
//     written to it and not yet answered; an ERROR frame has no options;
//   - an answer with the STREAM bit in byte 10 is one chunk of a streamed
//     response, the frame without it ends the response; a chunk with PING
//     asks for a PONG frame back;
//   - {"stop":true} as the context of an answer with no body is Worker::stop():
//     the worker will not serve that job nor any after it.

// stopAnswer is the answer context of Worker::stop().
var stopAnswer = []byte(`{"stop":true}`)

// AppendJob encodes a job frame as RoadRunner's server does: the job's id
// stays on this side, answers come back in order.
func (p *Protocol) AppendJob(buf []byte, _ uint32, ctx, body []byte) []byte {
	flags := byte(frame.Proto)
	if p.codec == JSON {
		flags = frame.JSON
	}
	return frame.Append(buf, flags, 0, []uint32{uint32(len(ctx))}, ctx, body)
}

// ReadAnswer checks an answer from a RoadRunner worker, which names no job:
// the pool takes the oldest (InOrder). An ERROR frame has no options.
func (*Protocol) ReadAnswer(f frame.Frame) (protocol.Answer, error) {
	if f.Flags&frame.Error != 0 {
		return protocol.Answer{}, nil
	}
	if len(f.Options) < 1 || int(f.Options[0]) > len(f.Payload) {
		return protocol.Answer{}, fmt.Errorf("answer without a [ctxLen] option or with ctxLen past the payload (options %v)", f.Options)
	}
	return protocol.Answer{CtxLen: f.Options[0], Part: f.Stream&frame.Stream != 0, Ping: f.Stream&frame.Ping != 0}, nil
}

// Stopped reports Worker::stop().
func (*Protocol) Stopped(ctx, body []byte) bool {
	return len(body) == 0 && bytes.Equal(bytes.TrimSpace(ctx), stopAnswer)
}

// AppendStop: RoadRunner's worker runs one job and takes any STOP as its own.
func (*Protocol) AppendStop(buf []byte, _ uint32) []byte {
	return frame.Append(buf, 0, frame.Stop, []uint32{0})
}

// AppendCancel: RoadRunner's workers are never run in Fiber mode; a STOP.
func (p *Protocol) AppendCancel(buf []byte, id uint32, _ string) []byte {
	return p.AppendStop(buf, id)
}

// AppendPong answers the PING a streaming worker sends every few chunks to
// learn whether it should look for a STOP frame.
func (*Protocol) AppendPong(buf []byte) []byte {
	return frame.Append(buf, 0, frame.Pong, nil)
}
