package pool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A deploy stops the server with SIGTERM: the requests it has accepted must
// still be answered, including those waiting for a worker, while new ones are
// refused.
func TestShutdownDrainsQueuedJobs(t *testing.T) {
	for _, pipeline := range []int{1, 4} { // 1: all ten wait in the queue; 4: three wait on the worker
		t.Run(fmt.Sprintf("pipeline %d", pipeline), func(t *testing.T) {
			p := newPool(t, Options{NumWorkers: 1, Pipeline: pipeline})
			g := newGate(t)
			slow := start(p, context.Background(), g.job("hold"))
			waitCounts(t, p, jobCounts{held: 1, sent: 1})
			var queued []*call
			for i := range 10 {
				queued = append(queued, start(p, context.Background(), fmt.Sprintf("echo:%d", i)))
			}
			onWorker := min(pipeline, 11) - 1
			waitCounts(t, p, jobCounts{held: 1 + onWorker, sent: 1, queued: 10 - onWorker})

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stopped := make(chan error, 1)
			go func() { stopped <- p.Shutdown(ctx) }()
			waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.closed }, "shutdown to start")
			if _, err := p.Exec(context.Background(), nil, []byte("echo:late")); !errors.Is(err, ErrClosed) {
				t.Errorf("a job arriving after shutdown started: %v, want ErrClosed", err)
			}
			g.open(t)
			if err := <-stopped; err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if c := slow.wait(); c.err != nil {
				t.Errorf("the running job: %v", c.err)
			}
			for i, c := range queued {
				if c.wait(); c.err != nil || c.out != fmt.Sprint(i) {
					t.Errorf("queued job %d: %q, %v; want it served before the workers stop", i, c.out, c.err)
				}
			}
			if n := len(p.Workers()); n != 0 {
				t.Errorf("%d workers left after Shutdown", n)
			}
		})
	}
}

// When the drain deadline passes, what still waits is refused and the workers
// are killed, so Shutdown keeps its deadline.
func TestShutdownDeadlineFailsWhatIsLeft(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	slow := start(p, context.Background(), "sleep:10000")
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	queued := start(p, context.Background(), "echo:x")
	waitCounts(t, p, jobCounts{held: 1, sent: 1, queued: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	if err := queued.wait().err; !errors.Is(err, ErrClosed) {
		t.Errorf("queued job: %v, want ErrClosed", err)
	}
	if err := slow.wait().err; !errors.Is(err, ErrCrashed) {
		t.Errorf("running job: %v, want ErrCrashed (its worker was killed)", err)
	}
}

// A client that closed its connection while its job was still waiting costs no
// PHP time: the job is dropped, wherever it waited, and never reaches PHP. A
// job already written runs to the end.
func TestClientGoneBeforeItsJobRan(t *testing.T) {
	for _, c := range []struct {
		name     string
		pipeline int
		where    jobCounts // once the job is waiting
	}{
		{"waiting for a worker", 1, jobCounts{held: 1, sent: 1, queued: 1}},
		{"held for a busy worker", 4, jobCounts{held: 2, sent: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPool(t, Options{NumWorkers: 1, Pipeline: c.pipeline})
			g := newGate(t)
			runningCtx, stopRunning := context.WithCancel(context.Background())
			running := start(p, runningCtx, g.job("hold"))
			waitCounts(t, p, jobCounts{held: 1, sent: 1})
			ctx, cancel := context.WithCancel(context.Background())
			gone := start(p, ctx, "echo:gone")
			waitCounts(t, p, c.where)
			cancel()
			stopRunning() // too late for this one: PHP has it
			if !gone.returned(5 * time.Second) {
				t.Fatal("the withdrawn job still waits for the job before it: it was not dropped")
			}
			if err := gone.err; !errors.Is(err, context.Canceled) {
				t.Fatalf("withdrawn job: %v, want context.Canceled", err)
			}
			g.open(t)
			if r := running.wait(); r.err != nil || r.out != "released" {
				t.Fatalf("the job PHP already had: %q, %v; want it run to the end", r.out, r.err)
			}
			seen := must(t, p, "seen")
			if strings.Contains(seen, "echo:gone") {
				t.Fatalf("PHP ran the withdrawn job; it saw:\n%s", seen)
			}
			waitCounts(t, p, jobCounts{})
		})
	}
}

// The watch over held jobs runs only while some are held.
func TestHeldWatchStopsWhenNothingIsHeld(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 4})
	g := newGate(t)
	running := start(p, context.Background(), g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	held := start(p, context.Background(), "echo:x")
	waitCounts(t, p, jobCounts{held: 2, sent: 1})
	// The job is counted held before its Exec starts the watch: wait for the watch, not the count.
	waitFor(t, p.heldWatch.Load, "the watch of the held job's client")
	g.open(t)
	if r := running.wait(); r.err != nil {
		t.Fatal(r.err)
	}
	if r := held.wait(); r.err != nil || r.out != "x" {
		t.Fatalf("held job: %q, %v", r.out, r.err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.heldWatch.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the watch still runs with no job held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
