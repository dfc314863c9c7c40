package pool

import (
	"sync"
	"testing"
)

// Once jobs are measured to take milliseconds, a sequential worker is given one
// job at a time: the others wait in the pool's queue, in arrival order, for
// whichever worker frees up first, instead of behind a slow job in a batch.
func TestSlowJobsShrinkTheBatch(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 16})
	for range 3 { // measured for real: three jobs of 10 ms, one write each
		must(t, p, "sleep:10")
	}
	if got := p.batchLimit(); got != 1 {
		t.Fatalf("after 10 ms jobs the batch limit is %d, want 1", got)
	}
	before := p.Workers()[0].Writes
	var wg sync.WaitGroup
	g := newGate(t)
	wg.Add(1)
	go func() { defer wg.Done(); run(t, p, g.job("hold")) }()
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); run(t, p, "echo:x") }()
		waitCounts(t, p, jobCounts{held: 1, sent: 1, queued: i + 1})
	}
	g.open(t)
	wg.Wait()
	if w := p.Workers()[0]; w.Writes-before != 5 {
		t.Fatalf("5 jobs after slow ones left in %d writes, want 5 (one each)", w.Writes-before)
	}
}

func TestShortJobsKeepTheWholeBatch(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 16})
	p.observeBatch(20_000, 1) // 20 µs per job
	if got := p.batchLimit(); got != 16 {
		t.Fatalf("with 20 µs jobs the batch limit is %d, want the pipeline depth 16", got)
	}
	p.observeBatch(80_000_000, 1) // one 80 ms job moves the average halfway
	if got := p.batchLimit(); got != 1 {
		t.Fatalf("after an 80 ms job the batch limit is %d, want 1", got)
	}
	for range 20 { // twenty fast batches after it: still one at a time
		p.observeBatch(20_000, 1)
	}
	if got := p.batchLimit(); got != 1 {
		t.Fatalf("20 fast jobs after an 80 ms one: batch limit %d, want still 1", got)
	}
}

// Once jobs are known to be short, a worker on its last job is sent the jobs
// that arrive meanwhile, so it finds them when it is done instead of waiting
// for a round trip; a worker with more than one job to go still holds them.
func TestShortJobsArePrefetchedByAWorkerOnItsLastJob(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 16})
	if _, err := run(t, p, "echo:warm"); err != nil {
		t.Fatal(err)
	}
	// As measured on hello; what a loaded machine measures (the race detector's
	// runs, say) must not decide what this test sees.
	p.jobNanos.Store(20_000)
	g := newGate(t)
	var wg sync.WaitGroup
	job := func(body string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := run(t, p, body); err != nil {
				t.Errorf("%s: %v", body, err)
			}
		}()
	}
	job(g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	job("echo:next")
	waitCounts(t, p, jobCounts{held: 2, sent: 2}) // written behind the last job
	job("echo:later")
	waitCounts(t, p, jobCounts{held: 3, sent: 2}) // two to go: held, still free to move
	g.open(t)
	wg.Wait()
}

func TestJobTableIDs(t *testing.T) {
	var tb jobTable
	seen := map[uint32]bool{}
	var held []*job
	for i := 0; i < 3000; i++ {
		j := &job{}
		id := tb.add(j)
		if id == 0 || seen[id] {
			t.Fatalf("id %d given twice or zero", id)
		}
		seen[id] = true
		held = append(held, j)
		if len(held) > 5 { // free the oldest, as answers do
			old := held[0]
			held = held[1:]
			tb.del(old.id)
			if tb.get(old.id) != nil {
				t.Fatalf("id %d still found after its job left", old.id)
			}
		}
		for _, h := range held {
			if tb.get(h.id) != h {
				t.Fatalf("job %d not found", h.id)
			}
		}
	}
	if n := len(tb.all(nil)); n != len(held) {
		t.Fatalf("table lists %d jobs, %d held", n, len(held))
	}
	if len(tb.slots) > 6 {
		t.Fatalf("%d slots for at most 6 jobs held at once", len(tb.slots))
	}
}

// The wait queue, consumed from its head, keeps reusing its array.
func TestWaitQueueReusesItsArray(t *testing.T) {
	var p Pool
	ws := []*waiter{{}, {}, {}}
	cycle := func() {
		for _, wt := range ws {
			p.enqueueLocked(wt)
		}
		for range ws {
			p.dequeueLocked(1)
		}
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("%v allocations per fill and drain of the queue", n)
	}
	p.enqueueLocked(ws[0])
	p.enqueueLocked(ws[1])
	p.dequeueLocked(1)
	if len(p.waitq) != 1 || p.waitq[0] != ws[1] {
		t.Fatalf("queue %v, want the second waiter only", p.waitq)
	}
}
