package pool

import (
	"sync/atomic"
	"time"
)

// The elastic pool: with MaxWorkers above NumWorkers, the current generation
// grows by itself when jobs wait and shrinks back to NumWorkers, its floor,
// once the extra workers idle.
//
// Growing is driven by waiting jobs, not by a poll: a job left waiting (in
// the queue for a worker, or held for a busy one) arms a single timer for
// ScaleUpAfter, and when it fires a worker starts if a job has waited that
// long and no worker is idle. The check re-arms itself for as long as jobs
// wait, so an idle pool costs nothing and a loaded one at most one check per
// ScaleUpAfter. Only one batch of new workers boots at a time, and a batch
// doubles while the backlog lasts (1, 2, 4, ... up to maxSpawnBatch, never
// more than the jobs waiting): one slow boot cannot turn a burst into a fork
// bomb, and a deep queue is not served one boot at a time either.
//
// Shrinking happens in checkLimits (supervisor.go): a worker above the floor
// that has taken no job for ScaleDownAfter retires, reason scale_down, the
// way every retirement goes (it finishes what it holds first).

const (
	// defaultScaleUpAfter: a job held this long is queueing, not passing
	// through. Jobs held behind a pipelined batch wait microseconds, so this
	// is far above the noise; and it is well under what a request waiting
	// for a forked worker (a few ms) or a hello-world one (under a ms) costs,
	// so a burst starts growing the pool within a couple of its requests.
	defaultScaleUpAfter = 10 * time.Millisecond
	// defaultScaleDownAfter: long enough that the gaps of a bursty load do
	// not stop workers that the next burst starts again (FPM's
	// pm.process_idle_timeout defaults to 10s too).
	defaultScaleDownAfter = 10 * time.Second
	// maxSpawnBatch bounds the workers started by one check (FPM's
	// pm.max_spawn_rate defaults to 32 too).
	maxSpawnBatch = 32
)

// Spawn reasons, as counted in Stats.Spawns.
const (
	SpawnStart   = "start"    // the first generation, at New
	SpawnReload  = "reload"   // a new generation
	SpawnReplace = "replace"  // keeps the generation at its floor after one exited
	SpawnScaleUp = "scale_up" // the elastic pool grew
)

// ReasonScaleDown retires a worker above the floor that idled ScaleDownAfter.
const ReasonScaleDown = "scale_down"

// SpawnObserver is told how long each worker took from its start to its
// handshake. An Options.Observer that implements it gets these too, under
// the pool's lock: it must not block.
type SpawnObserver interface {
	ObserveSpawn(time.Duration)
}

// scaler is the elastic pool's state.
type scaler struct {
	armed atomic.Bool  // a check is scheduled
	after atomic.Int64 // the current generation's ScaleUpAfter, ns; 0: not elastic
	batch int          // workers the next batch may start (doubles), under p.mu
}

func (o *Options) scaleDefaults() {
	// MaxWorkers at or below NumWorkers leaves the pool fixed (elastic);
	// config validation refuses it with a message.
	o.ScaleUpAfter, o.ScaleDownAfter = scaleDurations(o.ScaleUpAfter, o.ScaleDownAfter)
}

func scaleDurations(up, down time.Duration) (time.Duration, time.Duration) {
	if up <= 0 {
		up = defaultScaleUpAfter
	}
	if down <= 0 {
		down = defaultScaleDownAfter
	}
	return up, down
}

func (s *Settings) elastic() bool { return s.MaxWorkers > s.NumWorkers }

// syncScale publishes the current generation's ScaleUpAfter to scaleHint,
// which runs without the pool's lock; the supervisor calls it after a reload.
func (p *Pool) syncScale() {
	p.mu.Lock()
	set := p.set
	p.mu.Unlock()
	if set.elastic() {
		p.scale.after.Store(int64(set.ScaleUpAfter))
	} else {
		p.scale.after.Store(0)
	}
}

// scaleHint is called whenever a job is left waiting: it arms the check
// unless one is armed already. Two atomic loads when nothing is to be done.
func (p *Pool) scaleHint() {
	d := p.scale.after.Load()
	if d == 0 || p.scale.armed.Load() || !p.scale.armed.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(time.Duration(d), p.scaleUp)
}

func (p *Pool) rearmLocked(d time.Duration) {
	if p.scale.armed.CompareAndSwap(false, true) {
		time.AfterFunc(d, p.scaleUp)
	}
}

// scaleUp is the check scaleHint arms.
func (p *Pool) scaleUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Disarmed first: a job left waiting from here on arms the next check.
	p.scale.armed.Store(false)
	set := p.set
	if p.stopping || p.closed || !set.elastic() {
		return
	}
	oldest, waiting := p.waitingLocked()
	if waiting == 0 {
		p.scale.batch = 0
		return
	}
	if age := time.Since(oldest); age < set.ScaleUpAfter {
		p.rearmLocked(set.ScaleUpAfter - age)
		return
	}
	n, starting := 0, 0
	var idle *Worker
	for _, w := range p.workers {
		if w.gen != p.gen {
			continue
		}
		switch {
		case w.state == Starting:
			n++
			starting++
		case w.state.accepts():
			n++
			if w.occupied() == 0 {
				idle = w
			}
		}
	}
	if idle != nil {
		// Jobs held for busy workers while one is idle: they move to it
		// only when it answers something, which may not come. No new
		// worker is needed for them.
		go p.takeOver(idle)
	}
	// A batch still booting, a failed start's backoff, or an idle worker
	// taking the backlog: look again later rather than start more.
	if starting > 0 || idle != nil || time.Now().Before(p.nextSpawn) {
		p.rearmLocked(set.ScaleUpAfter)
		return
	}
	if n >= set.MaxWorkers {
		// At the ceiling: the queue's allocate_timeout is the last line. The
		// check is armed again by the next job left waiting.
		return
	}
	k := min(set.MaxWorkers-n, waiting, max(p.scale.batch, 1))
	p.scale.batch = min(max(p.scale.batch, 1)*2, maxSpawnBatch)
	p.log.Info("pool growing", "workers", n, "starting", k, "max_workers", set.MaxWorkers,
		"waiting", waiting, "oldest_wait", time.Since(oldest).Round(time.Millisecond))
	for range k {
		w := p.spawnLocked(SpawnScaleUp)
		go func() {
			if err := p.boot(w); err != nil {
				p.log.Error("worker failed to start", "error", err, "retry_in", p.backoff())
				p.poke()
				return
			}
			p.takeOver(w)
		}()
	}
	p.rearmLocked(set.ScaleUpAfter)
}

// waitingLocked counts the jobs waiting, in the queue or held for a busy
// worker, and says since when the oldest of them has.
func (p *Pool) waitingLocked() (oldest time.Time, n int) {
	if len(p.waitq) > 0 {
		oldest, n = p.waitq[0].since, len(p.waitq)
	}
	if p.unsent.Load() == 0 {
		return oldest, n
	}
	for _, w := range p.workers {
		w.mu.Lock()
		for _, j := range w.pending {
			n++
			if !j.start.IsZero() && (oldest.IsZero() || j.start.Before(oldest)) {
				oldest = j.start
			}
		}
		w.mu.Unlock()
	}
	if oldest.IsZero() {
		oldest = time.Now()
	}
	return oldest, n
}

// takeOver gives a worker that has just started the jobs held for busy
// sequential workers: they were left there before it existed, and the
// worker that holds them takes nothing new until its slow job ends, which is
// what the pool grew for. Queued jobs it got from boot's dispatch already.
func (p *Pool) takeOver(w *Worker) {
	if p.opt.Concurrent || p.unsent.Load() == 0 {
		return
	}
	// One job: the rest would wait behind it in its pipe, beyond reach of
	// the next worker the pool starts for them.
	p.steal(w, 1)
	w.mu.Lock()
	if w.writing || w.dead || !w.dirtyLocked() {
		w.mu.Unlock()
		return
	}
	w.flushLocked()
}

// spawnLocked adds a worker to the current generation, counted under why.
func (p *Pool) spawnLocked(why string) *Worker {
	p.countSpawnsLocked(why, 1)
	return p.addLocked(p.gen, p.set)
}

// generationSpawn names why a whole generation starts.
func generationSpawn(gen int) string {
	if gen == 0 {
		return SpawnStart
	}
	return SpawnReload
}

func (p *Pool) countSpawnsLocked(why string, n int) {
	if p.history.spawns == nil {
		p.history.spawns = map[string]uint64{}
	}
	p.history.spawns[why] += uint64(n)
}

// spawned records a worker's time from start to handshake.
func (p *Pool) spawned(d time.Duration) {
	if o, ok := p.opt.Observer.(SpawnObserver); ok {
		o.ObserveSpawn(d)
	}
}

// shrinkable counts the workers of the current generation above its floor,
// the ones scale-down may retire; 0 when the pool is not elastic.
func (p *Pool) shrinkableLocked() int {
	if !p.set.elastic() {
		return 0
	}
	n := 0
	for _, w := range p.workers {
		if w.gen == p.gen && (w.state == Starting || w.state.accepts()) {
			n++
		}
	}
	return max(n-p.set.NumWorkers, 0)
}
