package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
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
	set  *Settings // for the new generation; nil: the current one's
}

// Reload starts a full new generation and, once every new worker is ready,
// retires the old ones: their streamed answers are told to end, as if their
// clients had left, the jobs they still hold may finish within
// destroy_timeout, and whatever runs past it is killed. If the new code
// cannot boot, the old workers keep serving and the error is returned. When ctx
// ends first Reload returns ctx.Err() and the reload goes on.
func (p *Pool) Reload(ctx context.Context) error { return p.reload1(ctx, nil) }

// ReloadWith is Reload with new settings for the new generation (a new
// command, environment, size or limits): they are the pool's once that
// generation is ready, and a reload that fails keeps the old ones. Calls that
// share a run (see reloads) get the latest settings given.
func (p *Pool) ReloadWith(ctx context.Context, s Settings) error {
	if len(s.Command) == 0 {
		return errors.New("pool: no worker command")
	}
	s.defaults()
	return p.reload1(ctx, &s)
}

func (p *Pool) reload1(ctx context.Context, set *Settings) error {
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
	if set != nil {
		r.set = set
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
		r.err = p.reload(r.set)
		close(r.done)
	}
}

// reload replaces the generation in service. The new one is not the pool's
// until all of it is ready, so the supervisor keeps the old one at full
// strength meanwhile, and a failed reload has nothing to undo but its workers.
func (p *Pool) reload(set *Settings) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if set == nil {
		set = p.set
	}
	p.lastGen++
	gen := p.lastGen
	ws := p.addGenerationLocked(gen, set)
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
				p.dismissLocked(w, "reload failed")
			}
		}
		return fmt.Errorf("reload: %w", err)
	}
	p.gen, p.set = gen, set
	for _, w := range p.workers {
		if w.gen != gen {
			p.dismissLocked(w, "reload")
		}
	}
	p.poke() // a new worker that died after its handshake is replaced now
	p.log.Info("reload done", "workers", set.NumWorkers)
	return nil
}

// dismissLocked retires w for good: unlike a worker retired for its own
// limits (ttl, max_jobs), which finishes what it holds however long that
// takes, a replaced generation must be gone within destroy_timeout. An event
// stream lasts as long as its client listens, and a worker holding one would
// otherwise never exit, one more process per reload.
func (p *Pool) dismissLocked(w *Worker, why string) {
	switch {
	case w.state.accepts():
		p.retireLocked(w, why)
		if w.state == Stopping {
			return // nothing in flight: stop applies destroy_timeout
		}
	case w.state != Retiring:
		// Starting: boot stops a worker of a replaced generation. Stopping:
		// stop applies destroy_timeout. Or gone.
		return
	}
	// One retiring for its own limits (max_jobs, ttl) gets the reload's
	// deadline too; one dismissed by an earlier reload has it already.
	if w.dismissed.Swap(true) {
		return
	}
	w.endStreams.Store(true)
	go func() {
		w.stopStreams()
		w.bounceUnsent()
	}()
	d := p.set.DestroyTimeout // the new generation's: the operator's latest word
	time.AfterFunc(d, func() { w.destroy(d) })
}

// destroy kills w if it still runs once its destroy_timeout d is over.
func (w *Worker) destroy(d time.Duration) {
	select {
	case <-w.exited:
		return
	default:
	}
	w.mu.Lock()
	w.destroyed = true
	held := w.sent
	w.mu.Unlock()
	w.pool.log.Warn("retired worker still busy after destroy_timeout, killing", "pid", w.pid, "jobs", held, "destroy_timeout", d)
	w.kill()
}

// bounceUnsent hands the jobs held for w and not written yet back to Exec,
// which runs them on the new generation instead of letting them wait behind
// a job that may run until destroy_timeout.
func (w *Worker) bounceUnsent() {
	w.mu.Lock()
	js := w.pending
	w.pending = nil
	for _, j := range js {
		w.held -= frame.Size(2, len(j.ctx)+len(j.body))
		w.inflight.del(j.id)
	}
	w.addUnsent(-len(js))
	w.mu.Unlock()
	for _, j := range js {
		j.ch <- result{err: errUnsent}
	}
}
