package pool

import (
	"context"
	"fmt"
	"time"
)

// supervise enforces the lifetime limits and keeps the current generation at
// NumWorkers, respawning with backoff after boot failures.
func (p *Pool) supervise() {
	t := time.NewTicker(p.tick())
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.checkLimits()
		case <-p.kick:
		}
		p.maintain()
	}
}

// tick is short enough to honour the smallest configured lifetime reasonably.
func (p *Pool) tick() time.Duration {
	d := time.Second
	for _, l := range []time.Duration{p.opt.TTL, p.opt.IdleTTL} {
		if l > 0 && l/4 < d {
			d = max(l/4, 10*time.Millisecond)
		}
	}
	return d
}

func (p *Pool) checkLimits() {
	type probe struct {
		w   *Worker
		pid int
	}
	var mem []probe
	now := time.Now()
	p.mu.Lock()
	for _, w := range p.workers {
		if !w.state.accepts() {
			continue
		}
		// Idle means no job dispatched since the last check: cheaper than
		// reading the clock on every job.
		if w.state != Ready || w.dispatched != w.idleMark {
			w.idleMark, w.idleSince = w.dispatched, now
		}
		switch {
		case p.opt.TTL > 0 && now.Sub(w.created) >= p.opt.TTL:
			p.retireLocked(w, "ttl")
		case p.opt.IdleTTL > 0 && w.state == Ready && now.Sub(w.idleSince) >= p.opt.IdleTTL:
			p.retireLocked(w, "idle_ttl")
		case p.opt.MaxMemory > 0:
			mem = append(mem, probe{w, w.pid})
		}
	}
	p.mu.Unlock()
	for _, m := range mem { // /proc reads stay outside the lock
		if rss := m.w.rss(); rss > p.opt.MaxMemory {
			p.mu.Lock()
			p.log.Warn("worker over max_memory", "pid", m.pid, "rss", rss, "max_memory", p.opt.MaxMemory)
			p.retireLocked(m.w, "max_memory")
			p.mu.Unlock()
		}
	}
}

func (p *Pool) maintain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	n := 0
	for _, w := range p.workers {
		if w.gen == p.gen && (w.state == Starting || w.state.accepts()) {
			n++
		}
	}
	if n >= p.opt.NumWorkers {
		return
	}
	if wait := time.Until(p.nextSpawn); wait > 0 {
		time.AfterFunc(wait, p.poke)
		return
	}
	for ; n < p.opt.NumWorkers; n++ {
		w := p.addLocked(p.gen)
		go func() {
			if err := p.boot(w); err != nil {
				p.log.Error("worker failed to start", "error", err, "retry_in", p.backoff())
				p.poke()
			}
		}()
	}
}

func (p *Pool) backoff() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backoffLocked()
}

// Reload starts a full new generation and, once every new worker is ready,
// retires the old ones; their jobs in flight finish normally. If the new code
// cannot boot, the old workers keep serving and the error is returned.
func (p *Pool) Reload(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	old := p.gen
	p.gen++
	gen := p.gen
	ws := p.addGenerationLocked(gen)
	p.mu.Unlock()
	if err := p.bootAll(ws); err != nil {
		p.mu.Lock()
		p.gen = old
		for _, w := range p.workers {
			if w.gen == gen {
				p.retireLocked(w, "reload failed")
			}
		}
		p.mu.Unlock()
		return fmt.Errorf("reload: %w", err)
	}
	p.mu.Lock()
	for _, w := range p.workers {
		if w.gen < gen {
			p.retireLocked(w, "reload")
		}
	}
	p.mu.Unlock()
	p.log.Info("reload done", "workers", p.opt.NumWorkers)
	return ctx.Err()
}

// Info describes one worker for `ferry workers` and metrics.
type Info struct {
	PID      int
	State    string
	Jobs     uint64 // completed
	Writes   uint64 // relay writes that carried them (and control frames)
	InFlight int
	RSS      uint64
	Started  time.Time
}

// Workers lists the live workers.
func (p *Pool) Workers() []Info {
	p.mu.Lock()
	out := make([]Info, 0, len(p.workers))
	ws := append([]*Worker(nil), p.workers...)
	for _, w := range ws {
		out = append(out, Info{PID: w.pid, State: w.state.String(), Jobs: w.done.Load(), Writes: w.writes.Load(), InFlight: w.load, Started: w.created})
	}
	p.mu.Unlock()
	for i, w := range ws {
		out[i].RSS = w.rss()
	}
	return out
}

// Size is the configured number of workers per generation.
func (p *Pool) Size() int { return p.opt.NumWorkers }
