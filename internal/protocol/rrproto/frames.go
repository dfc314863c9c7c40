package pool

import (
	"bytes"
	"fmt"

	"github.com/ferry-php/ferry/internal/frame"
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

// rrStop is the answer context of Worker::stop().
var rrStop = []byte(`{"stop":true}`)

// appendRRJob encodes a job frame as RoadRunner's server does.
func appendRRJob(buf []byte, flags byte, j *job) []byte {
	return frame.Append(buf, flags, 0, []uint32{uint32(len(j.ctx))}, j.ctx, j.body)
}

// rrFrame checks an answer from a RoadRunner worker and gives it the
// [ctxLen, jobId] options readLoop expects; the id is resolved in settle (or
// in part, for a stream chunk, which it reports).
func (w *Worker) rrFrame(f *frame.Frame) (bool, error) {
	if f.Flags&frame.Error != 0 {
		f.Options = []uint32{0, 0}
		return false, nil
	}
	if len(f.Options) < 1 || int(f.Options[0]) > len(f.Payload) {
		return false, fmt.Errorf("answer without a [ctxLen] option or with ctxLen past the payload (options %v)", f.Options)
	}
	n := f.Options[0]
	if f.Stream&frame.Ping != 0 {
		w.pong()
	}
	f.Options = []uint32{n, 0}
	return f.Stream&frame.Stream != 0, nil
}

// pong answers a PING, which a streaming worker sends every few chunks to
// learn whether it should look for a STOP frame. Never written from the read
// loop itself: a worker busy writing chunks reads nothing, and a full pipe
// would then block both sides.
func (w *Worker) pong() {
	w.mu.Lock()
	if w.dead {
		w.mu.Unlock()
		return
	}
	w.extra = frame.Append(w.extra, 0, frame.Pong, nil)
	if w.writing { // the writer at work takes it along
		w.mu.Unlock()
		return
	}
	w.writing = true
	w.mu.Unlock()
	go w.drain()
}

// rrOldestLocked is the job a RoadRunner answer belongs to.
func (w *Worker) rrOldestLocked() uint32 {
	if len(w.order) == 0 {
		return 0
	}
	return w.order[0]
}

// rrStopped reports an answer that is Worker::stop(): the worker is retired,
// and the jobs it was sent from this one on are run elsewhere, since it will
// not serve them (errUnsent).
func (w *Worker) rrStopped(res Result) bool {
	if len(res.Body) != 0 || !bytes.Equal(bytes.TrimSpace(res.Context), rrStop) {
		return false
	}
	w.mu.Lock()
	w.rrQuit = true
	w.mu.Unlock()
	w.pool.retire(w, "worker asked to stop")
	return true
}
