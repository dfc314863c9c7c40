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
