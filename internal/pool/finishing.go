package pool

import "time"

// After-response work. An answer flagged frame.Finishing is followed, in the
// worker, by terminate hooks (a framework's kernel.terminate, a log flush) that
// the client does not wait for, but the next job would: until the worker sends
// frame.Finished, the answer still occupies it for scheduling, so new jobs go to
// a worker that can start them now. A Fiber worker keeps reading meanwhile; the
// hooks hold one of its slots, as they do in the worker.

// occupied is what pickLocked weighs: jobs given to w and hooks still running.
func (w *Worker) occupied() int { return w.load + w.after }

// hooksBegin is called by readLoop for a Finishing answer, before the answer is
// delivered: its client may ask again at once.
func (w *Worker) hooksBegin() {
	p := w.pool
	p.mu.Lock()
	w.after++
	w.mu.Lock()
	if w.hooks == 0 {
		w.hooksSince = time.Now()
	}
	w.hooks++
	w.mu.Unlock()
	p.mu.Unlock()
}

// hooksDone ends one Finishing answer's hooks: w takes jobs again, held ones
// first, or those held for a busier worker.
func (w *Worker) hooksDone(owner []*job) []*job {
	p := w.pool
	p.mu.Lock()
	if w.after == 0 {
		p.mu.Unlock()
		p.log.Warn("worker reported finished hooks it had not announced", "pid", w.pid)
		return owner
	}
	w.after--
	now := time.Now()
	w.mu.Lock()
	w.hooks--
	p.observeHooks(now.Sub(w.hooksSince))
	w.hooksSince = now // a Fiber worker's other hooks: timed from here, never early
	free := w.hooks == 0 && w.sent == 0 && len(w.pending) == 0 && !w.dead && !p.opt.Concurrent
	w.mu.Unlock()
	p.freedLocked(w)
	p.dispatchLocked()
	p.mu.Unlock()
	if free && p.unsent.Load() > 0 {
		p.steal(w, p.opt.Pipeline)
	}
	return w.settle(nil, owner[:0], now)
}

// hooksOverdueLocked tells whether w's terminate hooks have run for ttl: routed
// around, a worker stuck in one would otherwise hold its process forever, where
// before the next request's exec_ttl ended it.
func (w *Worker) hooksOverdueLocked(now time.Time, ttl time.Duration) bool {
	return w.hooks > 0 && now.Sub(w.hooksSince) >= ttl
}

// shortHooks is how long terminate hooks may take, on the pool's average, for
// a sequential worker running them to be sent its next jobs at once, as one on
// its last job is (prefetchLocked): the job then waits at most that long behind
// them, and the worker finds it when they end instead of a round trip through
// the server later. Longer hooks keep the jobs held, uncommitted, for a worker
// that frees up first.
const shortHooks = time.Millisecond

// observeHooks keeps a moving average of how long terminate hooks run, rising
// fast and falling slowly as observeBatch does: one slow hook is enough to hold
// jobs back for a while.
func (p *Pool) observeHooks(took time.Duration) {
	observeSlowFirst(&p.hookNanos, max(int64(took), 1))
}

// prefetchDuringHooksLocked is prefetchLocked for a worker running terminate hooks.
func (w *Worker) prefetchDuringHooksLocked() bool {
	h := w.pool.hookNanos.Load()
	return w.sent == 0 && w.streaming == 0 && h > 0 && h < int64(shortHooks)
}
