package pool

import (
	"bytes"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/leaks"
)

// leakStores holds each pool's findings. They outlive the workers that
// reported them, so they belong to the pool; kept beside it rather than in
// it so that the leak watch stays out of the pool's hot structures.
var leakStores sync.Map // *Pool -> *leaks.Store

// Leaks returns what the workers' leak watch has reported (pool.leak_watch).
func (p *Pool) Leaks() *leaks.Store {
	if s, ok := leakStores.Load(p); ok {
		return s.(*leaks.Store)
	}
	s, _ := leakStores.LoadOrStore(p, leaks.NewStore())
	return s.(*leaks.Store)
}

// leakReport takes a CONTROL frame carrying a leak watch finding
// ({"leak":{...}}, docs/protocol.md) and reports whether it was one. A new
// finding is logged at warn level; one known already (from another worker, or
// from a worker since replaced) is only counted.
func (w *Worker) leakReport(payload []byte) bool {
	if !bytes.HasPrefix(payload, leaks.Prefix) {
		return false
	}
	f, err := leaks.Parse(payload)
	if err != nil {
		w.pool.log.Warn("malformed leak report", "pid", w.pid, "error", err)
		return true
	}
	f.PID = w.pid
	if w.pool.Leaks().Add(f, time.Now()) {
		w.pool.log.Warn("leak: "+f.Message, "kind", f.Kind, "subject", f.Subject, "request", f.Request, "pid", w.pid, "after_requests", f.Requests)
	}
	return true
}
