// Package pool keeps a set of long-lived PHP workers, hands them jobs (several
// at a time when pipelining), and supervises their lifetimes: respawn with
// backoff, max_jobs, ttl, idle_ttl, memory, exec_ttl and graceful reload.
package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/relay"
)

// Pool is safe for concurrent use.
type Pool struct {
	opt   Options
	relay relay.Factory
	log   *slog.Logger

	mu        sync.Mutex
	workers   []*Worker
	waitq     []*waiter
	gen       int
	closed    bool
	failures  int // consecutive boot failures, for backoff
	nextSpawn time.Time
	live      sync.WaitGroup
	stopOnce  sync.Once

	kick    chan struct{}
	done    chan struct{} // closed when Shutdown starts
	stopped chan struct{} // closed when every worker is gone
}

// waiter is a job queued for a worker slot.
type waiter struct {
	ch    chan grant
	since time.Time
}

type grant struct {
	w   *Worker
	err error // ErrNoWorker after allocate_timeout, ErrClosed on shutdown
}

var waiters = sync.Pool{New: func() any { return &waiter{ch: make(chan grant, 1)} }}

// New starts opt.NumWorkers workers and returns when all are ready, or with the
// first boot error (quoting what PHP printed) after stopping the rest.
func New(opt Options) (*Pool, error) {
	opt.defaults()
	if len(opt.Command) == 0 {
		return nil, errors.New("pool: no worker command")
	}
	f, err := relay.New(opt.Relay, opt.SocketDir, opt.MaxFrame)
	if err != nil {
		return nil, err
	}
	p := &Pool{opt: opt, relay: f, log: opt.Logger, kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	p.mu.Lock()
	ws := p.addGenerationLocked(0)
	p.mu.Unlock()
	if err := p.bootAll(ws); err != nil {
		p.Shutdown(context.Background())
		return nil, err
	}
	go p.supervise()
	go p.watchdog()
	return p, nil
}

func (p *Pool) addGenerationLocked(gen int) []*Worker {
	ws := make([]*Worker, p.opt.NumWorkers)
	for i := range ws {
		ws[i] = p.addLocked(gen)
	}
	return ws
}

// bootAll boots workers in parallel and joins their errors.
func (p *Pool) bootAll(ws []*Worker) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.boot(w)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (p *Pool) addLocked(gen int) *Worker {
	w := p.newWorker(gen)
	p.workers = append(p.workers, w)
	p.live.Add(1)
	return w
}

// boot brings a Starting worker to Ready, or removes it.
func (p *Pool) boot(w *Worker) error {
	err := w.boot()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.setState(w, Errored)
		p.removeLocked(w)
		p.failures++
		p.nextSpawn = time.Now().Add(p.backoffLocked())
		p.live.Done()
		return err
	}
	p.failures = 0
	go w.readLoop()
	if p.closed {
		p.setState(w, Stopping)
		go w.stop()
		return nil
	}
	p.setState(w, Ready)
	w.idleSince = time.Now()
	p.log.Info("worker ready", "pid", w.pid, "boot", time.Since(w.created).Round(time.Millisecond))
	p.dispatchLocked()
	return nil
}

func (p *Pool) backoffLocked() time.Duration {
	d := p.opt.BackoffMin
	for i := 1; i < p.failures && d < p.opt.BackoffMax; i++ {
		d *= 2
	}
	return min(d, p.opt.BackoffMax)
}

func (p *Pool) setState(w *Worker, s State) {
	if w.state == s {
		return
	}
	if !canMove(w.state, s) {
		panic(fmt.Sprintf("pool: worker %d: illegal transition %s -> %s", w.pid, w.state, s))
	}
	w.state = s
}

func (p *Pool) removeLocked(w *Worker) {
	for i, x := range p.workers {
		if x == w {
			p.workers = append(p.workers[:i], p.workers[i+1:]...)
			return
		}
	}
}

// Exec runs one job and returns the worker's answer. A job that could not be
// written to a worker (it died first, or while the job waited to be sent to
// it) is retried on another one; a job a worker received is never run twice.
func (p *Pool) Exec(ctx context.Context, jobCtx, body []byte) (Result, error) {
	for attempt := 0; ; attempt++ {
		w, err := p.acquire(ctx)
		if err != nil {
			return Result{}, err
		}
		j := jobs.Get().(*job)
		r := result{err: w.submit(j, jobCtx, body)}
		if r.err == nil {
			r = <-j.ch
		}
		j.seen = 0
		j.timedOut.Store(false)
		jobs.Put(j)
		p.release(w)
		if r.err == errUnsent {
			if attempt < 3 {
				continue
			}
			r.err = ErrCrashed
		}
		return r.res, r.err
	}
}

// pickLocked returns the accepting worker with the fewest jobs in flight, so
// a worker stuck on a slow job stops receiving new ones.
func (p *Pool) pickLocked() *Worker {
	var best *Worker
	for _, w := range p.workers {
		if w.state.accepts() && w.load < p.opt.Pipeline && (best == nil || w.load < best.load) {
			best = w
		}
	}
	return best
}

func (p *Pool) takeLocked(w *Worker) {
	w.load++
	w.dispatched++
	p.setState(w, Working)
	if p.opt.MaxJobs > 0 && w.dispatched >= p.opt.MaxJobs {
		p.retireLocked(w, "max_jobs")
	}
}

func (p *Pool) acquire(ctx context.Context) (*Worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if w := p.pickLocked(); w != nil && len(p.waitq) == 0 {
		p.takeLocked(w)
		p.mu.Unlock()
		return w, nil
	}
	if len(p.waitq) >= p.opt.QueueSize {
		p.mu.Unlock()
		return nil, ErrQueueFull
	}
	wt := waiters.Get().(*waiter)
	wt.since = time.Now()
	p.waitq = append(p.waitq, wt)
	p.mu.Unlock()

	// Grants, timeouts (from the watchdog) and shutdown all reach the waiter
	// through wt.ch, sent under p.mu as it leaves the queue.
	select {
	case g := <-wt.ch:
		waiters.Put(wt)
		return g.w, g.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	for i, x := range p.waitq {
		if x == wt {
			p.waitq = append(p.waitq[:i], p.waitq[i+1:]...)
			p.mu.Unlock()
			waiters.Put(wt)
			return nil, ctx.Err()
		}
	}
	p.mu.Unlock()
	if g := <-wt.ch; g.w != nil { // handed a worker just as ctx ended
		p.release(g.w)
	}
	waiters.Put(wt)
	return nil, ctx.Err()
}

// expireWaitersLocked fails the jobs that have waited allocate_timeout for a
// worker. The queue is in arrival order, so they are at its head.
func (p *Pool) expireWaitersLocked(now time.Time) {
	n := 0
	for n < len(p.waitq) && now.Sub(p.waitq[n].since) >= p.opt.AllocateTimeout {
		p.waitq[n].ch <- grant{err: ErrNoWorker}
		n++
	}
	p.waitq = p.waitq[n:]
}

// release returns a job slot and hands freed capacity to waiting jobs.
func (p *Pool) release(w *Worker) {
	p.mu.Lock()
	w.load--
	w.done.Add(1)
	switch {
	case w.state == Working && w.load == 0:
		p.setState(w, Ready)
	case w.state == Retiring && w.load == 0:
		p.setState(w, Stopping)
		go w.stop()
	}
	p.dispatchLocked()
	p.mu.Unlock()
}

func (p *Pool) dispatchLocked() {
	for len(p.waitq) > 0 {
		w := p.pickLocked()
		if w == nil {
			return
		}
		wt := p.waitq[0]
		p.waitq = p.waitq[1:]
		p.takeLocked(w)
		wt.ch <- grant{w: w}
	}
}

func (p *Pool) retire(w *Worker, why string) {
	p.mu.Lock()
	p.retireLocked(w, why)
	p.mu.Unlock()
}

// retireLocked stops giving w jobs; it is stopped once the jobs it holds are done
// and the supervisor starts its replacement right away.
func (p *Pool) retireLocked(w *Worker, why string) {
	if !w.state.accepts() {
		return
	}
	p.log.Info("retiring worker", "pid", w.pid, "reason", why, "jobs", w.dispatched)
	p.setState(w, Retiring)
	if w.load == 0 {
		p.setState(w, Stopping)
		go w.stop()
	}
	p.poke()
}

// lost takes a worker whose stream ended out of rotation at once, before its
// process is reaped, so no job is routed to it meanwhile.
func (p *Pool) lost(w *Worker) {
	p.mu.Lock()
	if w.state != Stopping {
		p.setState(w, Errored)
	}
	p.mu.Unlock()
	p.poke()
}

// gone is called by a worker's read loop once its process has exited.
func (p *Pool) gone(w *Worker, cause error, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.state == Stopping {
		p.setState(w, Stopped)
		p.log.Info("worker stopped", "pid", w.pid, "jobs", w.done.Load())
	} else {
		p.log.Error("worker died", "pid", w.pid, "status", w.exitStatus(), "cause", cause, "jobs_failed", held, "output", w.out.tail())
	}
	p.removeLocked(w)
	p.live.Done()
	p.poke()
}

func (p *Pool) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Shutdown stops taking jobs, lets workers finish what they hold, and stops
// them; when ctx ends first the remaining workers are killed.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	for _, wt := range p.waitq {
		wt.ch <- grant{err: ErrClosed}
	}
	p.waitq = nil
	for _, w := range p.workers {
		p.retireLocked(w, "shutdown")
	}
	p.mu.Unlock()
	all := make(chan struct{})
	go func() { p.live.Wait(); close(all) }()
	var err error
	select {
	case <-all:
	case <-ctx.Done():
		err = ctx.Err()
		p.mu.Lock()
		for _, w := range p.workers {
			w.kill()
		}
		p.mu.Unlock()
		<-all
	}
	p.stopOnce.Do(func() { close(p.stopped) })
	p.relay.Close()
	return err
}
