package pool

// Queued is the number of jobs waiting for a worker, for metrics and for
// tests that must know a request has reached the pool.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waitq)
}
