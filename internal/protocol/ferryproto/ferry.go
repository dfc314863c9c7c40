// Package ferryproto is Ferry's own worker protocol (docs/protocol.md), the
// one php/worker speaks: a handshake with a token, jobs and answers named by
// a job id so that a worker may run several at once (Fiber mode), the request
// as PHP's serialized superglobals, the answer head as JSON read by a
// scanner shaped on json_encode's output (scan.go), file answers, hooks after
// an answer (FINISHING), and streamed answers stopped per job.
package ferryproto

import (
	"fmt"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/protocol"
)

// Protocol is Ferry's protocol; its zero value is ready.
type Protocol struct{}

var _ protocol.Protocol = Protocol{}

// Name is the pool.protocol value.
func (Protocol) Name() string { return "ferry" }

// Traits: answers carry their job's id, so a worker may run jobs in Fibers
// and answer them in any order.
func (Protocol) Traits() protocol.Traits {
	return protocol.Traits{Finishing: true, FileAnswers: true}
}

// Env: FERRY_RELAY is where the relay is, FERRY_RELAY_TOKEN what the worker
// presents in its handshake so that no other process can pose as it.
func (Protocol) Env(env []string, relay, token string) []string {
	return append(env, "FERRY_RELAY="+relay, "FERRY_RELAY_TOKEN="+token)
}

// AppendJob encodes a job frame: options [ctxLen, jobId].
func (Protocol) AppendJob(buf []byte, id uint32, ctx, body []byte) []byte {
	return frame.Append(buf, frame.CodecRaw, 0, []uint32{uint32(len(ctx)), id}, ctx, body)
}

// ReadAnswer checks the options of an answer, [ctxLen, jobId], and whether
// it is one part of a streamed answer (STREAM in byte 10).
func (Protocol) ReadAnswer(f frame.Frame) (protocol.Answer, error) {
	if len(f.Options) < 2 || (f.Flags&frame.Error == 0 && int(f.Options[0]) > len(f.Payload)) {
		return protocol.Answer{}, fmt.Errorf("answer without [ctxLen, jobId] options or with ctxLen past the payload (options %v)", f.Options)
	}
	return protocol.Answer{CtxLen: f.Options[0], ID: f.Options[1], Part: f.Stream&frame.Stream != 0 && f.Flags&frame.Error == 0}, nil
}

// Stopped: a Ferry worker asks to stop in a CONTROL frame, never in an answer.
func (Protocol) Stopped(ctx, body []byte) bool { return false }

// AppendStop names the job whose stream is to end: a worker may stream
// several at once.
func (Protocol) AppendStop(buf []byte, id uint32) []byte {
	return frame.Append(buf, frame.Control, frame.Stop, []uint32{0, id})
}

// AppendCancel is a STOP whose payload says why: to a job that is not
// streaming it means "end where you wait" (docs/protocol.md).
func (Protocol) AppendCancel(buf []byte, id uint32, why string) []byte {
	return frame.Append(buf, frame.Control, frame.Stop, []uint32{0, id}, []byte(why))
}

// AppendPong: a Ferry worker never pings.
func (Protocol) AppendPong(buf []byte) []byte { return buf }

// ParsesMultipart: every multipart body becomes $_POST and $_FILES.
func (Protocol) ParsesMultipart([]byte) bool { return true }

// EncodeRequest: the context is the request as PHP sees it, which the front
// builds (protocol.Front.AppendPHP); a multipart body went into it, any other
// stays the body.
func (Protocol) EncodeRequest(buf []byte, r protocol.Request) (ctx, body []byte, err error) {
	ctx = r.Front.AppendPHP(buf, r)
	if r.Multipart {
		return ctx, nil, nil
	}
	return ctx, r.Body, nil
}
