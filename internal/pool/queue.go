package pool

// Queued is the number of jobs accepted and not yet written to a worker:
// waiting for a worker, or held for a busy one. For metrics, and for tests
// that must know a request has reached the pool.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waitq) + int(p.unsent.Load())
}

func (p *Pool) enqueueLocked(wt *waiter) {
	p.waitq = append(p.waitq, wt)
	if cap(p.waitq) > cap(p.waitBase) { // a new array, with waitq at its start
		p.waitBase = p.waitq[:0]
	}
}

// dequeueLocked takes the n oldest waiters off the queue. It is consumed from
// its head; once empty it starts again at the start of its array, where the
// next append would otherwise find no room and allocate a new one, every few
// requests under load.
func (p *Pool) dequeueLocked(n int) {
	clear(p.waitq[:n])
	p.waitq = p.waitq[n:]
	if len(p.waitq) == 0 {
		p.waitq = p.waitBase[:0]
	}
}
