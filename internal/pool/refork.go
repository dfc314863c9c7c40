package pool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ferry-php/ferry/internal/forkserver"
	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/phplog"
)

// Refork (Settings.ReforkAfter): once a generation's workers have served
// that many jobs, one of them, warm (code loaded lazily, caches filled, the
// JIT's buffer), becomes the generation's mold in place of the zygote that
// only ran the boot. It forks a process that leaves the worker's relay and
// serves fork requests; the worker itself goes on serving. The workers forked
// before are then replaced one at a time, so that all come to share the warm
// pages. A worker that holds a connection it did not declare (Fork::reopens)
// refuses, and the generation keeps its zygote.

// reforkTimeout bounds the wait for a worker to become a mold: it acts between
// two jobs, and a worker whose loop cannot (a loop of the app's own, built on
// waitPayload) never answers.
const reforkTimeout = 10 * time.Second

// reforkLocked starts a refork when the current generation has served enough.
func (p *Pool) reforkLocked() {
	set := p.set
	if !set.Fork || set.ReforkAfter <= 0 || p.opt.Concurrent || p.reforked == p.gen || p.stopping {
		return
	}
	var served uint64
	var warm *Worker
	for _, w := range p.workers {
		if w.gen != p.gen {
			continue
		}
		served += w.done.Load()
		if w.state == Ready && w.occupied() == 0 && w.child != nil && (warm == nil || w.done.Load() > warm.done.Load()) {
			warm = w
		}
	}
	if served < uint64(set.ReforkAfter) || warm == nil {
		return
	}
	p.reforked = p.gen
	go p.refork(p.gen, warm)
}

func (p *Pool) refork(gen int, w *Worker) {
	l, err := forkserver.Listen(p.opt.SocketDir)
	if err != nil {
		p.log.Warn("refork: no socket for the mold", "error", err)
		return
	}
	defer l.Close()
	msg, _ := json.Marshal(map[string]any{"mold": map[string]string{"socket": l.Path()}})
	w.mu.Lock()
	if w.dead {
		w.mu.Unlock()
		return
	}
	w.extra = frame.Append(w.extra, frame.Control|frame.JSON, 0, nil, msg)
	w.flushLocked()
	ctx, cancel := context.WithTimeout(context.Background(), reforkTimeout)
	defer cancel()
	z, err := forkserver.Adopt(ctx, l, w.zygote.Token())
	if err != nil {
		p.log.Warn("refork: the worker did not become a mold; the generation keeps its zygote", "pid", w.pid, "error", err)
		return
	}
	out := phplog.New(p.log)
	out.SetPID(z.PID())
	if err := z.Output(out); err != nil {
		p.log.Warn("refork: the mold keeps the worker's log pipe", "error", err)
	}
	p.zyg.mu.Lock()
	s := p.zyg.byGen[gen]
	if s == nil || s.z == nil {
		p.zyg.mu.Unlock()
		z.Close()
		return
	}
	old := s.z
	s.z, s.status, s.exited = z, func() string { return "closed its socket" }, z.Exited()
	p.zyg.mu.Unlock()
	old.Close()
	go p.watchZygote(gen, s, z)
	p.log.Info("refork: a warm worker's state is the generation's mold now", "worker", w.pid, "mold", z.PID(), "jobs", w.done.Load())
	p.poke()
}

// rollLocked retires, one at a time, the workers of the current generation
// forked before its mold changed, once the others are up.
func (p *Pool) rollLocked() {
	if !p.set.Fork || p.reforked != p.gen {
		return
	}
	p.zyg.mu.Lock()
	s := p.zyg.byGen[p.gen]
	var mold *forkserver.Zygote
	if s != nil {
		select {
		case <-s.ready:
			mold = s.z
		default:
		}
	}
	p.zyg.mu.Unlock()
	if mold == nil {
		return
	}
	var stale *Worker
	ready := 0
	for _, w := range p.workers {
		if w.gen != p.gen {
			continue
		}
		switch {
		case w.state == Starting:
			return
		case w.state.accepts():
			ready++
			if w.zygote != mold && stale == nil {
				stale = w
			}
		}
	}
	if stale != nil && ready >= p.set.NumWorkers {
		p.retireLocked(stale, ReasonRefork)
	}
}
