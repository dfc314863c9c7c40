package pool

import (
	"context"
	"time"
)

// Exec runs one job and returns the worker's answer. A job that was not
// written to a worker (it died first, or while the job waited to be sent to
// it) is retried on another one; a job a worker received is never run twice.
//
// ctx is the client's: when it ends before the job reached PHP the job is
// dropped and Exec returns ctx.Err(), within two goneEvery (held.go); a job
// already written runs to the end. Shutdown does not cancel jobs it has
// accepted, it drains them.
func (p *Pool) Exec(ctx context.Context, jobCtx, body []byte) (Result, error) {
	j := jobs.Get().(*job)
	j.ctx, j.body, j.client = jobCtx, body, ctx
	r := p.run(j)
	if r.more {
		// j now belongs to the stream, which releases it after the last part.
		r.res.Stream = &Stream{p: p, j: j}
		return r.res, nil
	}
	// Nothing refers to j any more: it left every job table before its result
	// was sent, and the watchdog only looks at jobs inside those tables.
	j.reset()
	jobs.Put(j)
	return r.res, r.err
}

func (p *Pool) run(j *job) result {
	var first time.Time
	for retry := false; ; retry = true {
		w, err := p.acquire(j, retry)
		if err != nil {
			return result{err: err}
		}
		r := result{err: w.submit(j)}
		if r.err == nil {
			r = <-j.ch
		}
		if r.more {
			return r
		}
		unsent := r.err == errUnsent
		p.release(j, !unsent)
		if !unsent {
			return r
		}
		// A dead worker leaves rotation before its jobs learn it died, so a
		// retry never meets it again; only a run of fresh workers each dying
		// with the job unsent brings it back here, and allocate_timeout bounds that.
		if first.IsZero() {
			first = time.Now()
		} else if time.Since(first) >= p.opt.AllocateTimeout {
			p.mu.Lock()
			p.finishedLocked()
			p.mu.Unlock()
			return result{err: ErrNoWorker}
		}
	}
}

// pickLocked returns the accepting worker with the fewest jobs, so an idle
// worker is always preferred and a worker stuck on a slow job stops receiving
// new ones.
func (p *Pool) pickLocked() *Worker {
	var best *Worker
	depth := p.depth()
	for _, w := range p.workers {
		if w.state.accepts() && w.occupied() < depth && (best == nil || w.occupied() < best.occupied()) {
			best = w
			if w.occupied() == 0 {
				break
			}
		}
	}
	return best
}

func (p *Pool) takeLocked(w *Worker, j *job) {
	j.w = w
	w.load++
	w.dispatched++
	p.setState(w, Working)
	if w.set.MaxJobs > 0 && w.dispatched >= w.set.MaxJobs {
		p.retireLocked(w, "max_jobs")
	}
}

// acquire reserves a worker for j. The first attempt is refused once Shutdown
// has started; a retry of a job accepted before is served until the workers stop.
func (p *Pool) acquire(j *job, retry bool) (*Worker, error) {
	p.mu.Lock()
	switch {
	case !retry && p.closed:
		p.mu.Unlock()
		return nil, ErrClosed
	case !retry:
		p.active++
	case p.stopping:
		p.finishedLocked()
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if w := p.pickLocked(); w != nil && len(p.waitq) == 0 {
		p.takeLocked(w, j)
		p.mu.Unlock()
		return w, nil
	}
	if len(p.waitq) >= p.opt.QueueSize {
		p.finishedLocked()
		p.mu.Unlock()
		return nil, ErrQueueFull
	}
	wt := waiters.Get().(*waiter)
	wt.since, wt.j = time.Now(), j
	j.start = wt.since
	p.enqueueLocked(wt)
	p.mu.Unlock()

	p.watchHeld()

	// Grants, timeouts (from the watchdog), the client leaving (held.go) and
	// the end of a drain all reach the waiter through wt.ch, sent under p.mu
	// as it leaves the queue.
	g := <-wt.ch
	wt.j = nil
	waiters.Put(wt)
	return g.w, g.err
}

// expireWaitersLocked fails the jobs that have waited allocate_timeout for a
// worker. The queue is in arrival order, so they are at its head.
func (p *Pool) expireWaitersLocked(now time.Time) {
	n := 0
	for n < len(p.waitq) && now.Sub(p.waitq[n].since) >= p.opt.AllocateTimeout {
		p.failWaiterLocked(p.waitq[n], ErrNoWorker)
		n++
	}
	p.dequeueLocked(n)
}

func (p *Pool) failWaiterLocked(wt *waiter, err error) {
	wt.ch <- grant{err: err}
	p.finishedLocked()
}

// release returns j's slot and hands freed capacity to waiting jobs; last is
// false when j is about to be retried.
func (p *Pool) release(j *job, last bool) {
	p.mu.Lock()
	w := j.w
	w.load--
	if last {
		if j.sent { // j is ours again: its result has been received
			w.done.Add(1)
		}
		p.finishedLocked()
	}
	p.freedLocked(w)
	p.dispatchLocked()
	p.mu.Unlock()
}

// freedLocked moves w on once nothing occupies it: to Ready, or, retiring, to a stop.
func (p *Pool) freedLocked(w *Worker) {
	switch {
	case w.state == Working && w.occupied() == 0:
		p.setState(w, Ready)
	case w.state == Retiring && w.occupied() == 0:
		p.setState(w, Stopping)
		go w.stop()
	}
}

func (p *Pool) dispatchLocked() {
	for len(p.waitq) > 0 {
		w := p.pickLocked()
		if w == nil {
			return
		}
		wt := p.waitq[0]
		p.dequeueLocked(1)
		p.takeLocked(w, wt.j)
		wt.ch <- grant{w: w}
	}
}

// steal gives w, a sequential worker that has just answered everything it was
// sent, unsent jobs of the busy worker holding the most, for its caller to
// write. Those jobs were only waiting for their worker to finish what it runs,
// which may be a slow job, while w is free now. Jobs once written stay where
// they are. It takes at most limit of them, and no more than the pipeline depth.
func (p *Pool) steal(w *Worker, limit int) {
	p.mu.Lock()
	room := min(p.depth(), limit) - w.occupied()
	if w.set.MaxJobs > 0 {
		room = min(room, w.set.MaxJobs-w.dispatched)
	}
	if !w.state.accepts() || room <= 0 {
		p.mu.Unlock()
		return
	}
	var from *Worker
	most := 0
	for _, v := range p.workers {
		if v != w {
			if n := int(v.unsent.Load()); n > most {
				from, most = v, n
			}
		}
	}
	if from == nil {
		p.mu.Unlock()
		return
	}
	from.mu.Lock()
	moved := from.giveLocked(room)
	from.mu.Unlock()
	if len(moved) == 0 {
		p.mu.Unlock()
		return
	}
	from.load -= len(moved)
	from.dispatched -= len(moved)
	p.freedLocked(from)
	w.mu.Lock()
	for _, j := range moved {
		p.takeLocked(w, j)
		w.queueLocked(j)
	}
	w.mu.Unlock()
	p.dispatchLocked()
	p.mu.Unlock()
}
