package pool

import "time"

// watchdog enforces exec_ttl and allocate_timeout with one ticker per pool
// instead of a timer per job: arming and stopping runtime timers on every
// request cost more than the rest of the pool's bookkeeping together. Both
// limits are checked every tenth of the smaller one, so they are never applied
// early and at most one tick late. A job's exec_ttl clock starts at the first
// tick that sees it running.
func (p *Pool) watchdog() {
	ttl := p.opt.ExecTTL
	step := p.opt.AllocateTimeout
	if ttl > 0 {
		step = min(step, ttl)
	}
	t := time.NewTicker(min(max(step/10, 5*time.Millisecond), time.Second))
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
			p.mu.Unlock()
			if ttl <= 0 {
				continue
			}
			for _, w := range ws {
				if id, late := w.overdue(now, ttl); late {
					w.expire(id)
				}
			}
		}
	}
}

// overdue names a job of w that has run for ttl. A sequential worker runs only
// the oldest job it holds, so only that job's clock runs; the next one's starts
// when it is answered. A Fiber worker runs all its jobs at once.
func (w *Worker) overdue(now time.Time, ttl time.Duration) (uint32, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pool.opt.Concurrent {
		for id, j := range w.inflight {
			if j.seen == 0 {
				j.seen = now.UnixNano()
			} else if now.UnixNano()-j.seen >= int64(ttl) {
				return id, true
			}
		}
		return 0, false
	}
	if len(w.order) == 0 {
		w.watchID = 0
		return 0, false
	}
	if head := w.order[0]; head != w.watchID {
		w.watchID, w.watchSince = head, now
		return 0, false
	}
	return w.watchID, now.Sub(w.watchSince) >= ttl
}
