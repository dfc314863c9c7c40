package pool

import (
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

// Stream is the rest of an answer a worker sends in parts (frames with the
// STREAM flag, docs/protocol.md "Streamed answers"). Exec returns the first
// part with Result.Stream set; the caller reads the others with Next until
// the last one, or calls Stop when nobody wants them any more. Either way the
// job keeps its worker slot until the worker has sent its final frame.
//
// Parts reach Next one at a time: the worker's read loop hands a part over
// and waits for the caller to take it, so a slow client slows PHP down
// instead of filling the server's memory.
type Stream struct {
	p  *Pool
	j  *job
	mu sync.Mutex
	// end is set once the final frame (or the job's failure) was taken.
	end     bool
	stopped bool
}

// Next returns the next part of the answer; last is true for the part that
// ends it, after which the stream is closed. A worker that dies or overruns
// exec_ttl mid-stream ends it with an error.
func (s *Stream) Next() (part Result, last bool, err error) {
	r := <-s.j.ch
	if r.more {
		return r.res, false, nil
	}
	s.finish()
	if r.err == errUnsent { // parts were delivered: the worker had the job
		r.err = ErrCrashed
	}
	return r.res, true, r.err
}

// Stop tells the worker its client is gone (a STOP frame for the job); the
// worker then ends the answer early, and the caller still reads it to its
// end. Safe to call more than once, from any goroutine, and after the end.
func (s *Stream) Stop() {
	s.mu.Lock()
	if s.end || s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	// Under s.mu: finish, which recycles the job, waits for it.
	s.j.w.sendStop(s.j)
	s.mu.Unlock()
}

// Discard stops the stream and reads the rest of it in the background; the
// caller must not call Next any more.
func (s *Stream) Discard() {
	s.Stop()
	go func() {
		for {
			if r, last, _ := s.Next(); last {
				r.Settle()
				return
			}
		}
	}()
}

func (s *Stream) finish() {
	s.mu.Lock()
	s.end = true
	s.mu.Unlock()
	j := s.j
	s.p.release(j, true)
	j.reset()
	jobs.Put(j)
}

// EndStreams tells every streamed answer, now and from now on, to end as if
// its client had gone. A server about to drain calls it first: an event
// stream may last as long as its client listens, and the drain would wait for
// it until its budget runs out.
func (p *Pool) EndStreams() {
	p.endStreams.Store(true)
	p.mu.Lock()
	ws := append([]*Worker(nil), p.workers...)
	p.mu.Unlock()
	for _, w := range ws {
		w.stopStreams()
	}
}

// stopStreams sends a STOP frame for every job of w that is streaming.
func (w *Worker) stopStreams() {
	w.mu.Lock()
	var js []*job
	for _, j := range w.inflight.all(nil) {
		if j.streaming {
			js = append(js, j)
		}
	}
	w.mu.Unlock()
	for _, j := range js {
		w.sendStop(j)
	}
}

// sendStop queues the STOP frame for j.
func (w *Worker) sendStop(j *job) {
	w.mu.Lock()
	if w.dead || w.inflight.get(j.id) != j {
		w.mu.Unlock()
		return
	}
	drain := w.queueStopLocked(j.id, "")
	w.mu.Unlock()
	if drain {
		// Not on the caller's goroutine: a worker busy writing parts reads nothing
		// until the server takes them, and this write could wait for it.
		go w.drain()
	}
}

// queueStopLocked adds the STOP frame for the job id names to what is written
// next: a streamed answer's end, or with why a cancel (cancel.go). True when
// the caller must start the write (go w.drain()).
func (w *Worker) queueStopLocked(id uint32, why string) bool {
	if w.dead || w.inflight.get(id) == nil {
		return false
	}
	if why == "" {
		w.extra = w.pool.proto.AppendStop(w.extra, id)
	} else {
		w.extra = w.pool.proto.AppendCancel(w.extra, id, why)
	}
	if w.writing {
		return false
	}
	w.writing = true
	return true
}

// part hands one part of a streamed answer to the job it belongs to, and
// counts it as progress for exec_ttl: a streamed job is timed between parts.
func (w *Worker) part(f *frame.Frame, id uint32) {
	now := time.Now()
	w.mu.Lock()
	id = w.answerIDLocked(id)
	j := w.inflight.get(id)
	first := false
	if j != nil {
		if !j.streaming {
			j.streaming, first = true, true
			w.streaming++
		}
		j.seen = now.UnixNano()
		if w.watchID == id {
			w.watchSince = now
		}
	}
	w.mu.Unlock()
	if j == nil {
		w.pool.log.Warn("answer part for an unknown job", "pid", w.pid, "job", id)
		return
	}
	if first && (w.pool.endStreams.Load() || w.endStreams.Load()) {
		w.sendStop(j)
	}
	n := f.Options[0]
	j.ch <- result{res: Result{Context: f.Payload[:n:n], Body: f.Payload[n:]}, more: true}
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
	w.extra = w.pool.proto.AppendPong(w.extra)
	if w.writing { // the writer at work takes it along
		w.mu.Unlock()
		return
	}
	w.writing = true
	w.mu.Unlock()
	go w.drain()
}
