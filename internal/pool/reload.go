package pool

import (
	"context"
	"fmt"
)

// reloads serialises Reload: one runs at a time, and the calls that arrive
// while it runs share the single run that follows it, since that run starts
// from the code as it is then.
type reloads struct {
	next    *reloadRun // requested, not started
	running bool
}

type reloadRun struct {
	done chan struct{}
	err  error
}

// Reload starts a full new generation and, once every new worker is ready,
// retires the old ones; their jobs in flight finish normally. If the new code
// cannot boot, the old workers keep serving and the error is returned. When ctx
// ends first Reload returns ctx.Err() and the reload goes on.
func (p *Pool) Reload(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	r := p.reloads.next
	if r == nil {
		r = &reloadRun{done: make(chan struct{})}
		p.reloads.next = r
		if !p.reloads.running {
			p.reloads.running = true
			go p.reloadLoop()
		}
	}
	p.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Pool) reloadLoop() {
	for {
		p.mu.Lock()
		r := p.reloads.next
		p.reloads.next = nil
		if r == nil {
			p.reloads.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		r.err = p.reload()
		close(r.done)
	}
}

// reload replaces the generation in service. The new one is not the pool's
// until all of it is ready, so the supervisor keeps the old one at full
// strength meanwhile, and a failed reload has nothing to undo but its workers.
func (p *Pool) reload() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.lastGen++
	gen := p.lastGen
	ws := p.addGenerationLocked(gen)
	p.mu.Unlock()
	err := p.bootAll(ws)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && p.closed {
		err = ErrClosed
	}
	if err != nil {
		for _, w := range p.workers {
			if w.gen == gen {
				p.retireLocked(w, "reload failed")
			}
		}
		return fmt.Errorf("reload: %w", err)
	}
	p.gen = gen
	for _, w := range p.workers {
		if w.gen != gen {
			p.retireLocked(w, "reload")
		}
	}
	p.poke() // a new worker that died after its handshake is replaced now
	p.log.Info("reload done", "workers", p.opt.NumWorkers)
	return nil
}
