package pool

import (
	"slices"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

// submit queues a job for w. A sequential worker that is busy does not read
// until it has answered what it holds, so its jobs wait here and leave in one
// write when it is down to its last job (see prefetchLocked and settle): one
// pipe write and one wakeup per batch instead of one per job. Until then they are not committed to it: the
// client may withdraw them, or another worker that falls idle may take them.
// An idle worker, or a Fiber worker that reads while it runs jobs, gets the job
// now. Only one goroutine writes at a time; jobs queued meanwhile go out with
// its next write.
func (w *Worker) submit(j *job) error {
	w.mu.Lock()
	if w.dead {
		w.mu.Unlock()
		return errUnsent
	}
	w.queueLocked(j)
	if w.holdLocked() {
		if j.start.IsZero() { // held for a busy worker: its wait starts now
			j.start = time.Now()
		}
		w.mu.Unlock()
		w.pool.watchHeld()
		return nil
	}
	w.flushLocked()
	return nil
}

func (w *Worker) queueLocked(j *job) {
	w.inflight.add(j)
	j.sent = false
	w.pending = append(w.pending, j)
	w.held += frame.Size(2, len(j.ctx)+len(j.body))
	w.addUnsent(1)
}

// dropLocked takes j out of w if it has not been written yet.
func (w *Worker) dropLocked(j *job) bool {
	i := slices.Index(w.pending, j)
	if i < 0 {
		return false
	}
	w.pending = slices.Delete(w.pending, i, i+1)
	w.held -= frame.Size(2, len(j.ctx)+len(j.body))
	w.addUnsent(-1)
	w.inflight.del(j.id)
	return true
}

// giveLocked hands over up to n of w's oldest unsent jobs, provided w is busy
// with jobs it was sent: otherwise it is about to write them itself.
func (w *Worker) giveLocked(n int) []*job {
	if w.dead || w.sent == 0 || len(w.pending) == 0 {
		return nil
	}
	n = min(n, len(w.pending))
	moved := slices.Clone(w.pending[:n])
	for _, j := range moved {
		w.held -= frame.Size(2, len(j.ctx)+len(j.body))
		w.inflight.del(j.id)
	}
	w.pending = slices.Delete(w.pending, 0, n)
	w.addUnsent(-n)
	return moved
}

// addUnsent keeps the counts of unsent jobs, w's and the pool's, which let
// a worker that runs out of work see without a lock that others hold some.
func (w *Worker) addUnsent(n int) {
	w.unsent.Add(int32(n))
	w.pool.unsent.Add(int64(n))
}

// answeredLocked drops id from the submission order, which tells the exec_ttl
// watchdog which job a sequential worker runs now.
func (w *Worker) answeredLocked(id uint32) {
	w.sent--
	if i := slices.Index(w.order, id); i >= 0 {
		w.order = slices.Delete(w.order, i, i+1)
	}
}

// dirtyLocked reports whether anything waits to be written.
func (w *Worker) dirtyLocked() bool { return len(w.pending) > 0 || len(w.extra) > 0 }

// flushLocked is entered with w.mu held and returns with it released.
func (w *Worker) flushLocked() {
	if w.writing {
		w.mu.Unlock()
		w.pool.watchHeld() // the writer may leave what was queued held
		return
	}
	w.writing = true
	w.writeLocked()
}

// smallWrite never blocks on an empty pipe: a pipe holds at least a page.
const smallWrite = 4096

// drain writes what is pending on behalf of readLoop, which set w.writing.
func (w *Worker) drain() {
	w.mu.Lock()
	w.writeLocked()
}

// writeLocked writes what is pending, then what was queued meanwhile while
// moreLocked allows; the caller holds w.mu and the writing flag, and both are
// released on return.
func (w *Worker) writeLocked() {
	for first := true; w.dirtyLocked() && (first || w.moreLocked()); first = false {
		if !w.writeOnceLocked() {
			return
		}
	}
	w.writing = false
	w.mu.Unlock()
}

// moreLocked tells a writer that has just written whether to write the jobs
// queued meanwhile too. A sequential worker now busy with what it was sent
// does not read them before it answers, so they stay held, uncommitted, and
// leave with the next write its answers trigger.
func (w *Worker) moreLocked() bool {
	if w.pool.opt.Concurrent {
		return !w.holdLocked() || len(w.extra) > 0
	}
	return w.sent == 0 || len(w.extra) > 0
}

// holdLocked tells whether jobs for w wait in the pool instead of being written
// now. A Fiber worker busy running what it was sent would read them only once it
// is done or waiting; written then, in one write, they cost it one wake-up
// instead of one each.
func (w *Worker) holdLocked() bool {
	if w.pool.opt.Concurrent {
		return w.busy
	}
	return !w.prefetchLocked()
}

// writeOnceLocked writes what is pending now and reports whether w.mu is held
// again; on a failed write it is not and the worker is being killed.
func (w *Worker) writeOnceLocked() bool {
	buf := w.encodeLocked()
	w.mu.Unlock()
	w.writes.Add(1)
	err := w.conn.Write(buf)
	w.mu.Lock()
	if cap(buf) <= 1<<20 {
		w.spare = buf[:0]
	}
	if err != nil {
		w.writing = false
		w.mu.Unlock()
		w.kill() // the reader sees EOF and fails the jobs
		return false
	}
	return true
}

// encodeLocked turns everything pending into frames; from here on the jobs
// belong to the worker.
func (w *Worker) encodeLocked() []byte {
	buf := append(w.spare[:0], w.extra...)
	w.spare = nil
	w.extra = w.extra[:0]
	seq := !w.pool.opt.Concurrent
	inOrder := w.pool.trait.InOrder
	track := (w.set.ExecTTL > 0 || inOrder) && seq // answers without a job id are matched by this order
	n := len(w.pending)
	if seq {
		n = min(n, max(w.pool.batchLimit()-w.sent, 1))
	}
	var now time.Time
	if n > 0 {
		now = time.Now()
		if seq && w.sent == 0 {
			w.runFrom = now
		}
	}
	for _, j := range w.pending[:n] {
		buf = w.pool.proto.AppendJob(buf, j.id, j.ctx, j.body)
		j.sent = true
		j.wrote = now
		size := frame.Size(2, len(j.ctx)+len(j.body))
		w.held -= size
		w.inPipe += size
		if track {
			w.order = append(w.order, j.id)
		}
	}
	// Only a worker with at most one job left was written to at once because it
	// is idle: one with more has suspended jobs and reads while they wait.
	if n > 0 && !seq && w.conn.Waits && w.sent <= 1 {
		w.busy = true
	}
	w.sent += n
	w.addUnsent(-n)
	rest := copy(w.pending, w.pending[n:])
	clear(w.pending[rest:])
	w.pending = w.pending[:rest]
	return buf
}

// ranLocked returns how long a sequential worker took for the n answers that
// just arrived, for observeBatch: it runs one job at a time, so a job starts
// when it was written to an idle worker or when the answer before it arrived.
func (w *Worker) ranLocked(n int, now time.Time) time.Duration {
	took := now.Sub(w.runFrom)
	w.runFrom = now
	if n == 0 {
		return 0
	}
	return took
}

// prefetchLocked tells whether a sequential worker should be sent the jobs held
// for it now. One that has answered all it was sent has read all of it and
// waits. One on its last job gets the next ones while jobs are short, so that
// it finds them when it is done instead of waiting for a round trip through
// the server: they wait behind that one job, as they would in a batch. Until
// jobs have been measured, none is assumed short. Nor is anything sent ahead to
// a worker that streams an answer, which may last as long as its client listens.
func (w *Worker) prefetchLocked() bool {
	if w.hooks > 0 {
		return w.prefetchDuringHooksLocked()
	}
	return w.sent == 0 || (w.sent == 1 && w.streaming == 0 && w.pool.jobNanos.Load() > 0 && w.pool.batchLimit() > 1)
}
