package pool

// Queued is the number of jobs accepted and not yet written to a worker:
// waiting for a worker, or held for a busy one. For metrics, and for tests
// that must know a request has reached the pool.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waitq) + int(p.unsent.Load())
}
