package pool

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func fiberPool(t *testing.T, o Options, maxConcurrency int) *Pool {
	o.Command = phpCommand(t, "testdata/fiber_worker.php")
	o.Concurrent = true
	o.Env = append(o.Env, "FERRY_FIBERS=1", "FERRY_MAX_CONCURRENCY="+strconv.Itoa(maxConcurrency))
	return newPool(t, o)
}

func TestFiberAnswersComeBackOutOfOrder(t *testing.T) {
	p := fiberPool(t, Options{NumWorkers: 1, Pipeline: 8}, 8)
	slow := make(chan time.Time, 1)
	go func() { must(t, p, "sleep:400"); slow <- time.Now() }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if got := must(t, p, "sleep:10"); got != "slept 10" {
		t.Fatal(got)
	}
	fast := time.Now()
	if fast.Sub(start) > 300*time.Millisecond {
		t.Fatalf("the short job waited %v behind the long one on the same worker", fast.Sub(start))
	}
	if s := <-slow; !s.After(fast) {
		t.Fatal("the long job finished first")
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
	p := fiberPool(t, Options{NumWorkers: 2, Pipeline: 4}, 8)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := "sleep:100"
			if i == 0 {
				time.Sleep(20 * time.Millisecond)
				body = "crash"
			}
			_, errs[i] = run(t, p, body)
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	// The crashing worker held at most its pipeline depth of jobs; the other worker's are untouched.
	if errs[0] == nil || failed > 4 {
		t.Fatalf("crash failed %d jobs (errs %v), want the crash job and at most the 3 others it held", failed, errs)
	}
	must(t, p, "echo:after")
}
