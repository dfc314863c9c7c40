package pool

import "time"

// supervise enforces the lifetime limits and keeps the current generation at
// NumWorkers, respawning with backoff after failed starts. It goes on during a
// drain: the jobs still queued need workers.
func (p *Pool) supervise() {
	every := p.tick()
	t := time.NewTicker(every)
	defer t.Stop()
	p.syncScale()
	for {
		select {
		case <-p.stopped:
			return
		case <-t.C:
			p.checkLimits()
		case <-p.kick:
		}
		p.maintain()
		p.syncScale()                  // a reload may have changed the elastic settings
		if d := p.tick(); d != every { // a reload changed ttl, idle_ttl or scale_down_after
			every = d
			t.Reset(d)
		}
	}
}

// tick is short enough to honour the smallest configured lifetime reasonably.
func (p *Pool) tick() time.Duration {
	p.mu.Lock()
	set := p.set
	p.mu.Unlock()
	d := time.Second
	down := time.Duration(0)
	if set.elastic() {
		down = set.ScaleDownAfter
	}
	for _, l := range []time.Duration{set.TTL, set.IdleTTL, down} {
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
	excess := p.shrinkableLocked()
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
		case w.set.TTL > 0 && now.Sub(w.created) >= w.set.TTL:
			p.retireLocked(w, "ttl")
		case w.set.IdleTTL > 0 && w.state == Ready && now.Sub(w.idleSince) >= w.set.IdleTTL:
			p.retireLocked(w, "idle_ttl")
		case excess > 0 && w.gen == p.gen && w.state == Ready && now.Sub(w.idleSince) >= p.set.ScaleDownAfter:
			// Above the floor and idle: the pool shrinks (scale.go).
			p.retireLocked(w, ReasonScaleDown)
			excess--
		case w.set.MaxMemory > 0:
			mem = append(mem, probe{w, w.pid})
		}
	}
	p.mu.Unlock()
	for _, m := range mem { // /proc reads stay outside the lock
		if used, what := owned(m.pid); used > m.w.set.MaxMemory {
			p.mu.Lock()
			p.log.Warn("worker over max_memory", "pid", m.pid, what, used, "max_memory", m.w.set.MaxMemory)
			p.retireLocked(m.w, "max_memory")
			p.mu.Unlock()
		}
	}
}

func (p *Pool) maintain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return
	}
	n := 0
	for _, w := range p.workers {
		if w.gen == p.gen && (w.state == Starting || w.state.accepts()) {
			n++
		}
	}
	if n >= p.set.NumWorkers {
		p.reforkLocked()
		p.rollLocked()
		return
	}
	if wait := time.Until(p.nextSpawn); wait > 0 {
		time.AfterFunc(wait, p.poke)
		return
	}
	for ; n < p.set.NumWorkers; n++ {
		w := p.spawnLocked(SpawnReplace)
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

// Info describes one worker for `ferry workers` and metrics.
type Info struct {
	PID      int
	State    string
	Jobs     uint64 // completed
	Writes   uint64 // relay writes that carried them (and control frames)
	InFlight int
	RSS      uint64  // resident: counts the pages it shares with other processes in full
	PSS      uint64  `json:",omitempty"` // proportional: each shared page divided among its sharers
	USS      uint64  `json:",omitempty"` // unique: its private pages, what max_memory compares
	CPU      float64 // seconds of CPU used, user and system
	Started  time.Time
	Reason   string `json:",omitempty"` // why a retiring worker is retiring
}

// Workers lists the live workers.
func (p *Pool) Workers() []Info {
	p.mu.Lock()
	out := make([]Info, 0, len(p.workers))
	for _, w := range p.workers {
		out = append(out, Info{PID: w.pid, State: w.state.String(), Jobs: w.done.Load(), Writes: w.writes.Load(), InFlight: w.load, Started: w.created, Reason: w.reason})
	}
	p.mu.Unlock()
	for i := range out { // the pids were read under p.mu: a starting worker sets its own
		if m, ok := readMemory(out[i].PID); ok {
			out[i].RSS, out[i].PSS, out[i].USS = m.RSS, m.PSS, m.USS
		} else {
			out[i].RSS = rss(out[i].PID)
		}
		out[i].CPU = cpuSeconds(out[i].PID)
	}
	return out
}

// Size is the configured number of workers per generation: the latest
// reload's (the floor of an elastic pool).
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.set.NumWorkers
}
