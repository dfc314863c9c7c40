package pool

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// live counts the workers that take jobs or are booting to.
func live(p *Pool) int {
	return countState(p, "ready") + countState(p, "working") + countState(p, "starting")
}

// peak records the most live workers seen until stopped.
func peak(p *Pool) (stop func() int) {
	var most atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if n := int64(live(p)); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int { close(done); wg.Wait(); return int(most.Load()) }
}

// A burst of slow jobs grows the pool from num_workers to max_workers and
// no further, every worker runs one, and once they idle the pool shrinks
// back to its floor, each extra worker retired for scale_down.
func TestElasticPoolGrowsToMaxAndShrinksToFloor(t *testing.T) {
	for _, depth := range []int{1, 4} { // queued for a worker; held for a busy one
		t.Run(fmt.Sprintf("pipeline=%d", depth), func(t *testing.T) {
			p := newPool(t, Options{NumWorkers: 2, MaxWorkers: 4, Pipeline: depth,
				ScaleUpAfter: 10 * time.Millisecond, ScaleDownAfter: 300 * time.Millisecond})
			most := peak(p)
			g := newGate(t)
			var calls []*call
			for range 8 {
				calls = append(calls, start(p, context.Background(), g.job("hold")))
			}
			waitFor(t, func() bool { return counts(p).sent == 4 }, "four workers each running a job")
			// More checks with jobs still waiting start nothing at the ceiling.
			for range 3 {
				p.scaleUp()
			}
			if n := live(p); n != 4 {
				t.Fatalf("%d workers at the ceiling, want max_workers 4", n)
			}
			g.open(t)
			for _, c := range calls {
				if c.wait().err != nil || c.out != "released" {
					t.Fatalf("job: %q %v", c.out, c.err)
				}
			}
			waitFor(t, func() bool { return p.Stats().Restarts[ReasonScaleDown] == 2 && live(p) == 2 },
				"the pool back at its floor of 2")
			if m := most(); m != 4 {
				t.Errorf("the pool peaked at %d workers, want max_workers 4", m)
			}
			s := p.Stats()
			if s.Spawns[SpawnScaleUp] != 2 || s.Spawns[SpawnStart] != 2 {
				t.Errorf("spawns %v, want 2 at start and 2 scale_up", s.Spawns)
			}
			if len(s.Restarts) != 1 {
				t.Errorf("exits %v, want only the 2 scale_down", s.Restarts)
			}
		})
	}
}

// Without max_workers the pool stays at num_workers whatever waits: no
// check is even armed.
func TestFixedPoolDoesNotGrow(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 2})
	g := newGate(t)
	var calls []*call
	for range 5 {
		calls = append(calls, start(p, context.Background(), g.job("hold")))
	}
	waitCounts(t, p, jobCounts{held: 2, sent: 2, queued: 3})
	p.syncScale()
	p.scaleHint()
	if p.scale.armed.Load() {
		t.Error("a fixed pool armed a scale-up check")
	}
	p.scaleUp()
	if n := live(p); n != 2 {
		t.Errorf("%d workers, want the fixed 2", n)
	}
	g.open(t)
	for _, c := range calls {
		c.wait()
	}
	if n := p.Stats().Spawns[SpawnScaleUp]; n != 0 {
		t.Errorf("%d scale_up spawns in a fixed pool", n)
	}
}

// A reload applies the new generation's elastic settings: a fixed pool
// reloaded with max_workers grows, up to the new ceiling.
func TestReloadAppliesElasticSettings(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	set := p.opt.Settings()
	set.MaxWorkers, set.ScaleUpAfter, set.ScaleDownAfter = 3, 10*time.Millisecond, time.Minute
	if err := p.ReloadWith(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	g := newGate(t)
	var calls []*call
	for range 5 {
		calls = append(calls, start(p, context.Background(), g.job("hold")))
	}
	waitFor(t, func() bool { return counts(p).sent == 3 }, "three workers each running a job")
	p.scaleUp()
	if n := live(p); n != 3 {
		t.Errorf("%d workers, want the new max_workers 3", n)
	}
	g.open(t)
	for _, c := range calls {
		if c.wait().err != nil {
			t.Fatal(c.err)
		}
	}
}

// Every spawn's time to its handshake reaches an Observer that asks for it.
func TestSpawnLatencyIsObserved(t *testing.T) {
	obs := &spawns{}
	p := newPool(t, Options{NumWorkers: 2, Observer: obs})
	obs.mu.Lock()
	got := append([]time.Duration(nil), obs.got...)
	obs.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d spawn latencies for 2 workers", len(got))
	}
	for _, d := range got {
		if d <= 0 || d > 10*time.Second {
			t.Errorf("spawn latency %v", d)
		}
	}
	if s := p.Stats().Spawns; s[SpawnStart] != 2 {
		t.Errorf("spawns %v", s)
	}
}

type spawns struct {
	timings
	mu  sync.Mutex
	got []time.Duration
}

func (o *spawns) ObserveSpawn(d time.Duration) { o.mu.Lock(); o.got = append(o.got, d); o.mu.Unlock() }
