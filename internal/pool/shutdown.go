package pool

import "context"

// Shutdown drains the pool: Exec refuses new jobs at once (ErrClosed), while
// the jobs already accepted, running or waiting for a worker, go on being
// served by the workers, which are replaced as usual if they die meanwhile.
// Once no accepted job is left the workers are stopped. When ctx ends first,
// the jobs still waiting get ErrClosed and the workers are killed.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		if p.active == 0 {
			p.stopLocked()
		}
	}
	p.mu.Unlock()
	p.EndStreams()
	var err error
	select {
	case <-p.drained:
	case <-ctx.Done():
		err = ctx.Err()
		p.mu.Lock()
		p.stopLocked()
		for _, wt := range p.waitq {
			p.failWaiterLocked(wt, ErrClosed)
		}
		p.waitq = nil
		p.killAllLocked()
		p.mu.Unlock()
	}
	// No worker is added once stopping is set, so the count only goes down.
	all := make(chan struct{})
	go func() { p.live.Wait(); close(all) }()
	select {
	case <-all:
	case <-ctx.Done():
		err = ctx.Err()
		p.mu.Lock()
		p.killAllLocked()
		p.mu.Unlock()
		<-all
	}
	p.waitZygotes(p.opt.DestroyTimeout)
	p.stopOnce.Do(func() { close(p.stopped) })
	p.relay.Close()
	return err
}

// finishedLocked accounts for an accepted job that is over; the last one of a
// drain stops the workers.
func (p *Pool) finishedLocked() {
	p.active--
	if p.closed && p.active == 0 {
		p.stopLocked()
	}
}

// stopLocked retires every worker; a worker still booting is stopped when its
// handshake completes.
func (p *Pool) stopLocked() {
	if p.stopping {
		return
	}
	p.stopping = true
	close(p.drained)
	for _, w := range p.workers {
		p.retireLocked(w, "shutdown")
	}
}

func (p *Pool) killAllLocked() {
	for _, w := range p.workers {
		if w.pid != 0 { // set under p.mu once the process exists
			w.kill()
		}
	}
}
