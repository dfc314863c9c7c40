package pool

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
)

func fiberPool(t *testing.T, o Options, maxConcurrency int) *Pool {
	o.Command = phpCommand(t, "testdata/fiber_worker.php")
	o.Concurrent = true
	o.Env = append(o.Env, "FERRY_FIBERS=1", "FERRY_MAX_CONCURRENCY="+strconv.Itoa(maxConcurrency))
	return newPool(t, o)
}

func TestFiberAnswersComeBackOutOfOrder(t *testing.T) {
	// The second job is answered while the first still runs on the same worker.
	p := fiberPool(t, Options{NumWorkers: 1, Pipeline: 8}, 8)
	g := newGate(t)
	slow := start(p, context.Background(), g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	if got := must(t, p, "sleep:10"); got != "slept 10" {
		t.Fatal(got)
	}
	if slow.finished() {
		t.Fatal("the long job finished first")
	}
	g.open(t)
	if c := slow.wait(); c.err != nil || c.out != "released" {
		t.Fatalf("%q, %v", c.out, c.err)
	}
}

func TestFiberMaxConcurrencyRespected(t *testing.T) {
	for _, c := range []struct {
		name            string
		pipeline, limit int
	}{
		{"bounded by the server's pipeline depth", 3, 64},
		{"bounded by the worker's max_concurrency", 10, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fiberPool(t, Options{NumWorkers: 1, Pipeline: c.pipeline}, c.limit)
			var wg sync.WaitGroup
			peaks := make(chan int, 12)
			for i := 0; i < 12; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, _ := strconv.Atoi(must(t, p, "probe:100"))
					peaks <- n
				}()
			}
			wg.Wait()
			close(peaks)
			peak := 0
			for n := range peaks {
				peak = max(peak, n)
			}
			if peak != 3 {
				t.Fatalf("peak concurrency %d, want exactly 3 (jobs must overlap, up to the limit)", peak)
			}
		})
	}
}

func TestRetirementWithJobsInFlight(t *testing.T) {
	p := fiberPool(t, Options{NumWorkers: 1, Pipeline: 4, MaxJobs: 4}, 8)
	first := must(t, p, "pid") // job 1 of 4
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // jobs 2-4 are in flight when the worker retires
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := must(t, p, "sleep:200"); got != "slept 200" {
				t.Errorf("job in flight during retirement: %q", got)
			}
		}()
	}
	wg.Wait()
	if next := must(t, p, "pid"); next == first {
		t.Fatalf("worker %s served past max_jobs", first)
	}
}

func TestFiberCrashFailsOnlyHeldJobs(t *testing.T) {
	// Least-loaded routing puts s1 and s3 on one worker and s2 on the other,
	// where the crash then goes: it takes s2 with it, and only s2.
	p := fiberPool(t, Options{NumWorkers: 2, Pipeline: 4}, 8)
	g := newGate(t)
	var sleeps []*call
	for i := range 3 {
		sleeps = append(sleeps, start(p, context.Background(), g.job("hold")))
		waitCounts(t, p, jobCounts{held: i + 1, sent: i + 1})
	}
	if err := start(p, context.Background(), "crash").wait().err; !errors.Is(err, ErrCrashed) {
		t.Fatalf("crash job: %v", err)
	}
	g.open(t)
	for i, c := range sleeps {
		c.wait()
		if i == 1 && !errors.Is(c.err, ErrCrashed) {
			t.Errorf("s2, on the crashed worker: %v, want ErrCrashed", c.err)
		}
		if i != 1 && (c.err != nil || c.out != "released") {
			t.Errorf("s%d, on the other worker: %q, %v", i+1, c.out, c.err)
		}
	}
	must(t, p, "echo:after")
}

func TestFiberJobsForABusyWorkerLeaveInOneWrite(t *testing.T) {
	// A worker running CPU cannot start the jobs that arrive meanwhile: they wait in
	// the pool and reach it in one write, so it wakes once for them, not once each.
	p := fiberPool(t, Options{NumWorkers: 1, Pipeline: 16}, 16)
	g := newGate(t)
	busy := start(p, context.Background(), g.job("block"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	var calls []*call
	for i := range 5 {
		calls = append(calls, start(p, context.Background(), "echo:x"))
		waitCounts(t, p, jobCounts{held: 2 + i, sent: 1})
	}
	g.open(t)
	if c := busy.wait(); c.err != nil || c.out != "unblocked" {
		t.Fatalf("%q, %v", c.out, c.err)
	}
	for _, c := range calls {
		if r := c.wait(); r.err != nil || r.out != "x" {
			t.Fatalf("%q, %v", r.out, r.err)
		}
	}
	if w := p.Workers()[0]; w.Jobs != 6 || w.Writes != 2 {
		t.Fatalf("%d jobs in %d writes, want 6 in 2 (the busy job, then the five held ones together)", w.Jobs, w.Writes)
	}
}

func TestFiberJobsGoOnceEveryJobWaits(t *testing.T) {
	// Jobs held for a busy worker must not wait for its suspended jobs: once all it
	// runs waits on the loop, it says so and gets them.
	p := fiberPool(t, Options{NumWorkers: 1, Pipeline: 16}, 16)
	g := newGate(t)
	b := newGate(t)
	waiting := start(p, context.Background(), g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	// Suspended on the loop: the worker said so, and the next job goes at once.
	busy := start(p, context.Background(), b.job("block"))
	waitCounts(t, p, jobCounts{held: 2, sent: 2})
	// Now it runs CPU: the next job waits in the pool until that job is done.
	quick := start(p, context.Background(), "sleep:1")
	waitCounts(t, p, jobCounts{held: 3, sent: 2})
	b.open(t)
	if c := busy.wait(); c.err != nil || c.out != "unblocked" {
		t.Fatalf("%q, %v", c.out, c.err)
	}
	if c := quick.wait(); c.err != nil || c.out != "slept 1" {
		t.Fatalf("%q, %v", c.out, c.err)
	}
	if waiting.finished() {
		t.Fatal("the held job finished before its gate opened")
	}
	g.open(t)
	if c := waiting.wait(); c.err != nil || c.out != "released" {
		t.Fatalf("%q, %v", c.out, c.err)
	}
}
