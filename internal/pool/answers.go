package pool

import (
	"bytes"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/protocol"
)

// readLoop owns the worker's end: it delivers answers and, when the stream ends,
// fails exactly the jobs the worker still held.
//
// Answers are taken a batch at a time, as the worker wrote them: the batch is
// accounted for under one lock, the jobs held for the worker leave before
// anyone is woken (the worker is about to read again and should not wait for
// the deliveries), and then the waiting jobs get their results.
func (w *Worker) readLoop() {
	var (
		cause error
		batch []frame.Frame
		owner []*job
		proto = w.pool.proto
		a     protocol.Answer
		fault error
	)
	for {
		f, err := w.conn.Read()
		if err != nil {
			cause = err
			break
		}
		if f.Flags&frame.Control != 0 {
			// A worker may ask to be retired ({"stop":true}, e.g. a reset hook
			// failed): it gets no new jobs and finishes those it holds. A leak
			// report (leaks.go) is taken first: its text may quote "stop".
			switch {
			case w.leakReport(f.Payload):
			case bytes.Equal(f.Payload, waitingReport):
				owner = w.allWaiting(owner)
			case bytes.Equal(f.Payload, frame.Finished):
				owner = w.hooksDone(owner)
			case bytes.Contains(f.Payload, []byte(`"stop"`)):
				w.pool.retire(w, "worker asked to stop")
			}
		} else {
			if a, fault = proto.ReadAnswer(f); fault != nil {
				cause = fault
				break
			}
			if len(f.Options) != 2 || f.Options[0] != a.CtxLen || f.Options[1] != a.ID {
				// Ferry's answers have these options already; others get them.
				f.Options = []uint32{a.CtxLen, a.ID}
			}
			if a.Ping {
				w.pong()
			}
			if a.Part {
				// The answers read before it go first: delivering a part
				// may wait for a slow client.
				if len(batch) > 0 {
					owner = w.answerBatch(batch, owner)
					clear(batch)
					batch = batch[:0]
				}
				w.part(&f, f.Options[1])
				continue
			}
			if f.Stream&frame.Finishing != 0 && w.pool.trait.Finishing {
				w.hooksBegin() // before the answer is delivered and its client asks again
			}
			batch = append(batch, f)
		}
		if w.conn.Buffered() > 0 && len(batch) < w.pool.opt.Pipeline {
			continue // more of this batch has arrived; a worker holds at most Pipeline jobs
		}
		owner = w.answerBatch(batch, owner)
		clear(batch)
		batch = batch[:0]
	}
	w.pool.lost(w, w.answered+len(batch) > 0 || w.servedDirect())
	owner = w.answerBatch(batch, owner) // answers read before the failure
	w.mu.Lock()
	held := w.inflight.all(nil)
	w.inflight = jobTable{}
	w.addUnsent(-len(w.pending))
	clear(w.pending)
	w.pending = nil
	failed := make(map[*job]error, len(held))
	for _, j := range held {
		switch {
		case j.timedOut:
			failed[j] = ErrExecTimeout
		case !j.sent, w.quit:
			failed[j] = errUnsent // Exec runs it on another worker
		default:
			failed[j] = ErrCrashed
		}
	}
	w.mu.Unlock()
	w.kill()
	lostJobs := 0
	for j, err := range failed {
		if err != errUnsent {
			lostJobs++
		}
		j.ch <- result{err: err}
	}
	<-w.exited
	w.pool.directGone(w)
	w.spool.gone()
	w.conn.Close()
	w.pool.gone(w, cause, lostJobs)
}

// waitingReport is what a Fiber worker that reports its waits sends when every job it
// runs is suspended: the jobs held for it can go now.
var waitingReport = []byte(`{"waiting":true}`)

func (w *Worker) allWaiting(owner []*job) []*job {
	w.mu.Lock()
	w.busy = false
	w.mu.Unlock()
	return w.settle(nil, owner[:0], time.Now())
}

// answerBatch settles and delivers the answers read in one go, with one
// clock read shared by the batching estimate and the jobs' timings.
func (w *Worker) answerBatch(batch []frame.Frame, owner []*job) []*job {
	now := time.Now()
	owner = w.settle(batch, owner[:0], now)
	w.deliver(batch, owner, now)
	w.answeredBatch(len(batch), now)
	return owner
}

// answeredBatch notes n answers; the first one shows the worker can serve,
// which ends a run of failed starts.
func (w *Worker) answeredBatch(n int, now time.Time) {
	if n == 0 {
		return
	}
	w.out.JobDone(now)
	if w.answered == 0 {
		w.pool.healthy()
	}
	w.answered += n
}

// settle takes the answered jobs out of the job table, appending each answer's
// job (nil if unknown) to owner, and sends the jobs held meanwhile.
//
// A sequential worker that has answered all it was sent is free now, while
// the jobs held for busy workers wait for those to finish what they run, maybe
// a slow job: it takes them over first, so they leave in this write.
func (w *Worker) settle(batch []frame.Frame, owner []*job, now time.Time) []*job {
	w.mu.Lock()
	for _, f := range batch {
		id := w.answerIDLocked(f.Options[1])
		j := w.inflight.get(id)
		if j != nil {
			w.inflight.del(id)
			if j.streaming {
				w.streaming--
			}
			w.answeredLocked(id)
			w.inPipe -= frame.Size(2, len(j.ctx)+len(j.body))
		}
		owner = append(owner, j)
	}
	seq := !w.pool.opt.Concurrent
	if !seq && w.sent <= 1 {
		w.busy = false // done, or on its last job: it reads what is written now next
	}
	if len(batch) > 0 && seq {
		// Recorded after this worker's next write is decided: the jobs held
		// meanwhile were sized by what the pool knew when they arrived.
		defer w.pool.observeBatch(w.ranLocked(len(batch), now), len(batch))
	}
	if len(batch) > 0 && w.sent == 0 && w.hooks == 0 && !w.dead && seq && w.pool.unsent.Load() > int64(w.unsent.Load()) {
		w.mu.Unlock()
		w.pool.steal(w, w.pool.opt.Pipeline)
		w.mu.Lock()
	}
	switch {
	case w.writing || w.dead || !w.dirtyLocked() || w.holdLocked():
		w.mu.Unlock()
	case w.inPipe+w.held+len(w.extra) <= smallWrite:
		// What the worker has not read yet and this write together fit in the
		// pipe or socket buffer, so the write cannot block.
		w.writing = true
		if !w.writeOnceLocked() {
			return owner // the kill ends the stream
		}
		if !w.dirtyLocked() || !w.moreLocked() {
			w.writing = false
			w.mu.Unlock()
			return owner
		}
		// More arrived meanwhile: that write might block, so it goes to drain
		// like a big one.
		w.mu.Unlock()
		go w.drain()
	default:
		// Not on this goroutine: a big write could block until the worker
		// reads, while the worker blocks writing answers nobody reads.
		w.writing = true
		w.mu.Unlock()
		go w.drain()
	}
	return owner
}

// deliver hands each answer to the job waiting for it.
func (w *Worker) deliver(batch []frame.Frame, owner []*job, now time.Time) {
	if len(batch) == 0 {
		return
	}
	for i, f := range batch {
		j := owner[i]
		switch {
		case j == nil:
			w.pool.log.Warn("answer for an unknown job", "pid", w.pid, "job", f.Options[1])
		case j.timedOut:
			// Cancelled for exec_ttl (a Fiber worker's job): what it answered while
			// unwinding is not the app's answer.
			j.ch <- result{err: ErrExecTimeout}
		case f.Flags&frame.Error != 0:
			j.ch <- result{err: &JobError{Message: string(f.Payload)}}
		default:
			n := f.Options[0]
			head, body := f.Payload[:n:n], f.Payload[n:]
			if w.pool.proto.Stopped(head, body) {
				w.askedStop()
				j.ch <- result{err: errUnsent}
				continue
			}
			res := Result{Context: head, Body: body, Timing: w.timeJob(j, now)}
			if w.pool.trait.FileAnswers {
				res.spool = w.spool.claim(head)
			}
			j.ch <- result{res: res}
		}
	}
	w.lastAnswer = now
}

// answerIDLocked is the job an answer naming id belongs to: id itself, or
// the oldest job written and not yet answered when answers name none.
func (w *Worker) answerIDLocked(id uint32) uint32 {
	if !w.pool.trait.InOrder {
		return id
	}
	if len(w.order) == 0 {
		return 0
	}
	return w.order[0]
}

// askedStop retires a worker that refused a job: the jobs it was sent from
// that one on run elsewhere, since it will not serve them (errUnsent).
func (w *Worker) askedStop() {
	w.mu.Lock()
	w.quit = true
	w.mu.Unlock()
	w.pool.retire(w, "worker asked to stop")
}
