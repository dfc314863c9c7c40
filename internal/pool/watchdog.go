package pool

import "time"

// watchdog enforces exec_ttl and allocate_timeout with one ticker per pool
// instead of a timer per job: arming and stopping runtime timers on every
// request cost more than the rest of the pool's bookkeeping together. Both
// limits are checked every tenth of the smaller one, so they are never applied
// early and at most one tick late. A job's exec_ttl clock starts at the first
// tick that sees it running.
func (p *Pool) watchdog() {
	every := p.watchStep(p.opt.ExecTTL)
	t := time.NewTicker(every)
	defer t.Stop()
	var ws []*Worker
	for {
		select {
		case <-p.stopped:
			return
		case now := <-t.C:
			p.mu.Lock()
			p.expireWaitersLocked(now)
			ws = append(ws[:0], p.workers...)
			ttl := p.set.ExecTTL
			p.mu.Unlock()
			for _, w := range ws {
				// Each worker under its own generation's exec_ttl: a reload
				// changes it for the new workers only.
				ttl := w.set.ExecTTL
				if ttl > 0 || w.pool.opt.Concurrent {
					w.enforce(now, ttl) // a Fiber worker's clients are looked at even without exec_ttl
				}
				if ttl > 0 {
					w.enforceDirect(now, ttl)
				}
			}
			if d := p.watchStep(ttl); d != every {
				every = d
				t.Reset(d)
			}
		}
	}
}

// watchStep is a tenth of the smaller of exec_ttl and allocate_timeout.
func (p *Pool) watchStep(execTTL time.Duration) time.Duration {
	step := p.opt.AllocateTimeout
	if execTTL > 0 {
		step = min(step, execTTL)
	}
	return min(max(step/10, 5*time.Millisecond), time.Second)
}

// enforce kills w if a job it holds has run for ttl: PHP cannot be
// interrupted mid-statement from outside, so the process is the unit of
// cancellation. The job is found and the signal sent in one critical section
// of w.mu, and answers are taken out of the job table under that lock too, so
// the job it kills for is still in flight: it cannot have been answered, nor
// its struct reused for another job, in between.
func (w *Worker) enforce(now time.Time, ttl time.Duration) {
	w.mu.Lock()
	if ttl > 0 && w.hooksOverdueLocked(now, ttl) && !w.expired {
		w.expired = true
		w.kill()
		w.mu.Unlock()
		w.pool.log.Warn("terminate hooks exceeded exec_ttl, killing worker", "pid", w.pid, "exec_ttl", ttl)
		return
	}
	if w.pool.opt.Concurrent {
		w.cancelFibersLocked(now, ttl)
		return
	}
	j := w.overdueLocked(now, ttl)
	if j == nil || j.timedOut {
		w.mu.Unlock()
		return
	}
	j.timedOut = true
	w.expired = true
	w.kill()
	w.mu.Unlock()
	w.pool.log.Warn("job exceeded exec_ttl, killing worker", "pid", w.pid, "exec_ttl", ttl)
}

// overdueLocked names the job of a sequential worker that has run for ttl. It
// runs only the oldest job it was sent, so only that job's clock runs; the next
// one's starts when it is answered.
func (w *Worker) overdueLocked(now time.Time, ttl time.Duration) *job {
	if len(w.order) == 0 {
		w.watchID = 0
		return nil
	}
	if head := w.order[0]; head != w.watchID {
		w.watchID, w.watchSince = head, now
		return nil
	}
	if now.Sub(w.watchSince) < ttl {
		return nil
	}
	return w.inflight.get(w.watchID)
}
