package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A job still running destroy_timeout after a reload is not waited for: its
// worker is killed, the job fails as a crash would, and the worker counts as
// retired by the reload, not as crashed.
func TestReloadKillsWhatRunsPastDestroyTimeout(t *testing.T) {
	for _, fibers := range []bool{false, true} {
		t.Run("fibers="+strconv.FormatBool(fibers), func(t *testing.T) {
			o := Options{NumWorkers: 1, DestroyTimeout: 200 * time.Millisecond, Concurrent: fibers}
			if fibers {
				o.Command = phpCommand(t, "testdata/fiber_worker.php")
			}
			p := newPool(t, o)
			old := must(t, p, "pid")
			g := newGate(t) // never opened before the kill
			c := start(p, context.Background(), g.job("hold"))
			waitCounts(t, p, jobCounts{held: 1, sent: 1})
			if err := p.Reload(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := must(t, p, "pid"); got == old {
				t.Fatal("served by the retired worker")
			}
			if !c.returned(10 * time.Second) {
				t.Fatal("the job outlived destroy_timeout by 10s")
			}
			if !errors.Is(c.err, ErrCrashed) {
				t.Fatalf("the killed job returned %q, %v", c.out, c.err)
			}
			waitFor(t, func() bool { return oneGeneration(p) }, "the old worker to be gone")
			st := p.Stats()
			if st.Restarts[ReasonReload] != 1 || st.Restarts[ReasonCrash] != 0 {
				t.Fatalf("restarts %v, want one for the reload", st.Restarts)
			}
		})
	}
}

// A worker already retiring for its own limits when a reload comes (here
// max_jobs, on the job it runs) is held to destroy_timeout like the others.
func TestReloadKillsARetiringWorkerToo(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, MaxJobs: 1, DestroyTimeout: 200 * time.Millisecond})
	g := newGate(t)
	c := start(p, context.Background(), g.job("hold"))
	waitFor(t, func() bool { return countState(p, "retiring") == 1 && countState(p, "ready") == 1 }, "the worker retiring on its last job, its replacement ready")
	if err := p.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !c.returned(10 * time.Second) {
		t.Fatal("the retiring worker's job outlived destroy_timeout by 10s")
	}
	if !errors.Is(c.err, ErrCrashed) {
		t.Fatalf("the killed job returned %q, %v", c.out, c.err)
	}
	waitFor(t, func() bool { return oneGeneration(p) }, "one generation")
}

// A job held for a busy worker that a reload retires goes to the new
// generation at once, instead of waiting for the job ahead of it to end or
// be killed.
func TestReloadHandsHeldJobsToTheNewGeneration(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 2, DestroyTimeout: time.Minute})
	// No job before: until jobs are measured, none is sent ahead to a busy worker.
	old := strconv.Itoa(p.Workers()[0].PID)
	g := newGate(t)
	slow := start(p, context.Background(), g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	next := start(p, context.Background(), "pid")
	waitCounts(t, p, jobCounts{held: 2, sent: 1}) // held for the busy worker
	if err := p.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !next.returned(10 * time.Second) {
		t.Fatal("the held job waits behind the retired worker's slow one")
	}
	if next.err != nil || next.out == old {
		t.Fatalf("held job: %q %v (old worker %s)", next.out, next.err, old)
	}
	if slow.finished() {
		t.Fatal("the slow job ended before its gate opened")
	}
	g.open(t)
	if slow.wait(); slow.err != nil || slow.out != "released" {
		t.Fatalf("the retired worker's job: %q %v", slow.out, slow.err)
	}
	waitFor(t, func() bool { return oneGeneration(p) }, "the old worker to stop")
}

// A replacement for a worker of the old generation that dies during a reload
// boots after the reload is done: it must stop then, not serve on as one
// worker more than num_workers, which nothing would ever retire.
func TestReplacementOfAReplacedGenerationStops(t *testing.T) {
	dir := t.TempDir()
	hold, spawns := filepath.Join(dir, "hold"), filepath.Join(dir, "spawns")
	p := newPool(t, Options{NumWorkers: 1, Env: []string{"HOLD_BOOT=" + hold, "SPAWN_LOG=" + spawns}})
	must(t, p, "pid") // answered: its death is a crash, replaced at once
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, p, "crash"); !errors.Is(err, ErrCrashed) {
		t.Fatalf("crash: %v", err)
	}
	// The replacement took the hold: it waits before its handshake.
	waitFor(t, func() bool { _, err := os.Stat(hold + ".held"); return err == nil }, "the replacement to start")
	if err := p.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.Remove(hold + ".held")
	waitFor(t, func() bool {
		b, _ := os.ReadFile(spawns)
		return strings.Count(string(b), "\n") == 3 && oneGeneration(p) && countState(p, "stopping") == 0
	}, "one worker of the new generation")
}
