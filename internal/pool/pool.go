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
	"sync/atomic"
	"time"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/relay"
)

// Pool is safe for concurrent use. What a worker prints is logged through
// internal/phplog, one Writer per worker.
type Pool struct {
	opt   Options // what Settings holds is read from set and Worker.set instead
	proto protocol.Protocol
	trait protocol.Traits // proto's, read once
	relay relay.Factory
	log   *slog.Logger

	mu        sync.Mutex
	workers   []*Worker
	waitq     []*waiter
	waitBase  []*waiter // the start of the largest array waitq has had (queue.go)
	gen       int       // the generation kept at NumWorkers
	set       *Settings // gen's: what its replacements start with
	lastGen   int       // the newest generation started, maybe still booting
	closed    bool
	stopping  bool         // drained (or out of time): the workers are being stopped
	active    int          // jobs accepted by Exec and not finished; Shutdown waits for them
	unsent    atomic.Int64 // jobs held for sequential workers, not written yet
	jobNanos  atomic.Int64 // measured time per job on sequential workers (see batchLimit)
	hookNanos atomic.Int64 // measured time terminate hooks run after an answer (finishing.go)
	failures  int          // consecutive failed starts, for backoff
	nextSpawn time.Time
	live      sync.WaitGroup
	stopOnce  sync.Once
	reloads   reloads
	history   history // counters and retired workers, for metrics
	zyg       zygotes // Settings.Fork: each generation's zygote (fork.go)
	reforked  int     // the generation last reforked (refork.go); -1: none
	scale     scaler  // the elastic pool (scale.go)

	// endStreams is set once the server drains: streamed answers are told to end.
	endStreams atomic.Bool
	heldWatch  atomic.Bool // the held-job watch runs (held.go)

	kick    chan struct{}
	drained chan struct{} // closed when the workers start stopping
	stopped chan struct{} // closed when every worker is gone
}

// waiter is a job queued for a worker slot.
type waiter struct {
	ch    chan grant
	since time.Time
	j     *job
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
	set := opt.Settings()
	trait := opt.Protocol.Traits()
	if trait.Sequential && opt.Concurrent {
		return nil, fmt.Errorf("pool: %s workers run one job at a time (no Fiber mode)", opt.Protocol.Name())
	}
	if set.Fork && (opt.Relay != "" && opt.Relay != "pipes" || trait.ByPID || trait.Stdio) {
		return nil, fmt.Errorf("pool: forked workers (boot: fork) need the pipes relay and Ferry's protocol; use boot: exec")
	}
	f, err := relay.New(opt.Relay, opt.SocketDir, opt.MaxFrame, opt.Protocol)
	if err != nil {
		return nil, err
	}
	p := &Pool{reforked: -1, opt: opt, proto: opt.Protocol, trait: trait, set: &set, relay: f, log: opt.Logger, kick: make(chan struct{}, 1), drained: make(chan struct{}), stopped: make(chan struct{})}
	if opt.SpoolDir != "" {
		sweepSpools(opt.SpoolDir)
	}
	p.mu.Lock()
	ws := p.addGenerationLocked(0, p.set)
	p.mu.Unlock()
	if err := p.bootAll(ws); err != nil {
		p.Shutdown(context.Background())
		return nil, err
	}
	go p.supervise()
	go p.watchdog()
	return p, nil
}

func (p *Pool) addGenerationLocked(gen int, set *Settings) []*Worker {
	ws := make([]*Worker, set.NumWorkers)
	p.countSpawnsLocked(generationSpawn(gen), len(ws))
	for i := range ws {
		ws[i] = p.addLocked(gen, set)
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
	return joinAlike(errs)
}

// joinAlike says once what several workers failed alike. Workers of one
// generation run the same command, so a script that is not a worker fails the
// same way in each: with num_workers at one per CPU, its quoted page and the
// advice came once per core and buried the message.
func joinAlike(errs []error) error {
	var distinct []error
	count := map[string]int{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		if count[err.Error()]++; count[err.Error()] == 1 {
			distinct = append(distinct, err)
		}
	}
	for i, err := range distinct {
		if n := count[err.Error()]; n > 1 {
			distinct[i] = fmt.Errorf("%d workers failed alike: %w", n, err)
		}
	}
	return errors.Join(distinct...)
}

func (p *Pool) addLocked(gen int, set *Settings) *Worker {
	w := p.newWorker(gen, set)
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
		w.stats.Load().close()
		w.spool.gone()
		p.setState(w, Errored)
		p.removeLocked(w)
		p.endLocked(w, ReasonBootFailed)
		p.failedStartLocked()
		p.live.Done()
		return err
	}
	go w.readLoop()
	// A replacement started for a generation that a reload has retired
	// meanwhile: the reload did not see it ready, so it stops here.
	if p.stopping || w.gen < p.gen {
		p.setState(w, Stopping)
		go w.stop()
		return nil
	}
	p.setState(w, Ready)
	w.idleSince = time.Now()
	p.spawned(w.idleSince.Sub(w.created))
	p.log.Info("worker ready", "pid", w.pid, "boot", time.Since(w.created).Round(time.Millisecond))
	p.provenDirect(w)
	p.dispatchLocked()
	return nil
}

// failedStartLocked counts a worker that died before it answered a job, in
// the handshake or after it, and delays the next start: a worker that crashes
// as soon as it is up must not be restarted in a tight loop.
func (p *Pool) failedStartLocked() {
	p.failures++
	p.nextSpawn = time.Now().Add(p.backoffLocked())
}

// healthy is called when a worker answers its first job.
func (p *Pool) healthy() {
	p.mu.Lock()
	p.failures = 0
	p.mu.Unlock()
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
	w.reason = reasonLabel(why)
	p.setState(w, Retiring)
	if w.occupied() == 0 {
		p.setState(w, Stopping)
		go w.stop()
	} else if !w.endStreams.Swap(true) {
		// A retiring worker ends when what it holds is done, and an event
		// stream is done when its client leaves: for ttl, max_memory or
		// max_jobs to recycle the process at all, its streams are told to
		// end (the client gets a clean end; EventSource reconnects).
		go w.stopStreams()
	}
	p.poke()
}

// lost takes a worker whose stream ended out of rotation before anything
// else learns of it: w.dead and the Errored state change in one critical
// section of both locks, so a worker that refuses jobs (errUnsent) is never
// picked again and a retried job cannot loop on it.
func (p *Pool) lost(w *Worker, answered bool) {
	p.mu.Lock()
	w.mu.Lock()
	w.dead = true // nothing more is written to it
	killed := w.expired || w.destroyed
	w.mu.Unlock()
	if w.state != Stopping {
		p.setState(w, Errored)
		if !answered && !killed && !p.stopping {
			p.failedStartLocked()
		}
	}
	p.mu.Unlock()
	p.poke()
}

// gone is called by a worker's read loop once its process has exited.
func (p *Pool) gone(w *Worker, cause error, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	reason := w.reason
	switch {
	case w.state == Stopping:
		p.setState(w, Stopped)
		p.log.Info("worker stopped", "pid", w.pid, "jobs", w.done.Load())
	case reason == ReasonAsked && held == 0:
		// It asked to be retired (after a fatal error it answered, or a failed
		// reset hook) and exited before the pool's stop reached it, with nothing
		// unanswered: a stop, not a crash, whichever of the two came first.
		p.log.Info("worker stopped", "pid", w.pid, "jobs", w.done.Load(), "status", w.exitStatus())
	default:
		w.mu.Lock()
		expired, destroyed := w.expired, w.destroyed
		w.mu.Unlock()
		switch {
		case expired:
			reason = ReasonExecTTL
		case destroyed: // retired already, and the kill was logged
		default:
			reason = ReasonCrash
		}
		if !destroyed || expired {
			p.log.Error("worker died", "pid", w.pid, "status", w.exitStatus(), "cause", cause, "jobs_failed", held, w.out.Died())
		} else {
			p.log.Info("worker killed", "pid", w.pid, "reason", reason, "jobs_failed", held)
		}
	}
	if reason == "" {
		reason = ReasonShutdown
	}
	p.endLocked(w, reason)
	p.removeLocked(w)
	p.closeZygotesLocked()
	p.live.Done()
	p.poke()
}

func (p *Pool) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}
