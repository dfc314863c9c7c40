package pool

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Two workers, both busy: one on a slow job, the other on a short one. The
// next job is held for the first, since both hold one job; when the short job
// ends its worker takes the held job over instead of idling while the job
// waits out the slow one.
func TestHeldJobMovesToTheWorkerThatFreesFirst(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 2, Pipeline: 4})
	slowGate, shortGate := newGate(t), newGate(t)
	slow := start(p, context.Background(), slowGate.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	short := start(p, context.Background(), shortGate.job("hold"))
	waitCounts(t, p, jobCounts{held: 2, sent: 2})
	next := start(p, context.Background(), "echo:next")
	waitCounts(t, p, jobCounts{held: 3, sent: 2})
	shortGate.open(t)
	if !next.returned(5 * time.Second) {
		t.Fatal("the held job waits for the slow job although the other worker is free")
	}
	if next.err != nil || next.out != "next" {
		t.Fatalf("held job: %q, %v", next.out, next.err)
	}
	slowGate.open(t)
	for _, c := range []*call{slow, short} {
		if c.wait(); c.err != nil || c.out != "released" {
			t.Fatalf("%q, %v", c.out, c.err)
		}
	}
}

// Jobs taken over keep the guarantees of held jobs: a client that goes away
// drops its job wherever it is held, a job that reached PHP is served once,
// and the workers account for exactly the jobs they ran.
func TestHeldJobsMovedAroundUnderLoad(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 3, Pipeline: 8})
	var calls []*call
	var cancels []context.CancelFunc
	for i := range 90 {
		body := "echo:x"
		switch i % 7 {
		case 0:
			body = "sleep:150"
		case 3:
			body = "sleep:20"
		}
		ctx, cancel := context.WithCancel(context.Background())
		calls = append(calls, start(p, ctx, body))
		if i%5 == 4 {
			cancels = append(cancels, cancel)
		} else {
			defer cancel()
		}
	}
	for _, cancel := range cancels {
		cancel()
	}
	served := uint64(0)
	for i, c := range calls {
		switch c.wait(); {
		case c.err == nil:
			served++
		case i%5 != 4 || !errors.Is(c.err, context.Canceled):
			t.Fatalf("job %d (%s): %v", i, c.body, c.err)
		}
	}
	waitCounts(t, p, jobCounts{})
	total := uint64(0)
	for _, w := range p.Workers() {
		total += w.Jobs
	}
	if total != served {
		t.Fatalf("workers report %d jobs, %d were answered", total, served)
	}
}
