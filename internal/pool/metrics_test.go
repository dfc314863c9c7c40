package pool

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

type timings struct {
	mu  sync.Mutex
	got []Timing
}

func (o *timings) ObserveJob(t Timing) { o.mu.Lock(); o.got = append(o.got, t); o.mu.Unlock() }

// A job queued behind a slow one on the only worker waits for it, and its own
// PHP time is its own: the split happens when the answer before it arrives.
func TestTimingSplitsWaitFromRun(t *testing.T) {
	obs := &timings{}
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 4, Observer: obs})
	slow := start(p, context.Background(), "sleep:300")
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	r, err := p.Exec(context.Background(), nil, []byte("sleep:10"))
	if err != nil {
		t.Fatal(err)
	}
	if slow.wait().err != nil {
		t.Fatal(slow.err)
	}
	tm := r.Timing
	if strconv.Itoa(tm.PID) != must(t, p, "pid") {
		t.Errorf("timing names worker %d, not the one that ran it", tm.PID)
	}
	if tm.Wait < 200*time.Millisecond {
		t.Errorf("wait %v: the job waited for the 300 ms one ahead of it", tm.Wait)
	}
	if tm.Run < 10*time.Millisecond || tm.Run > 250*time.Millisecond {
		t.Errorf("run %v, want about 10 ms: not counting the job before it", tm.Run)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.got) < 2 {
		t.Errorf("observer saw %d jobs, want the 2 answered", len(obs.got))
	}
}

// Jobs counted by workers that are gone stay counted: the total is a counter.
func TestStatsOutliveWorkers(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, MaxJobs: 3})
	first := must(t, p, "pid")
	for range 5 {
		must(t, p, "echo:x")
	}
	waitFor(t, func() bool { return p.Stats().Restarts[ReasonMaxJobs] >= 1 }, "a max_jobs retirement")
	start(p, context.Background(), "crash").wait()
	waitFor(t, func() bool { return p.Stats().Restarts[ReasonCrash] == 1 }, "the crash counted")
	s := p.Stats()
	if s.Jobs < 6 {
		t.Errorf("jobs total %d after 6 answered jobs", s.Jobs)
	}
	var found bool
	for _, r := range s.Retired {
		if strconv.Itoa(r.PID) == first {
			found = r.Reason == ReasonMaxJobs && r.Jobs == 3
		}
	}
	if !found {
		t.Errorf("worker %s not listed as retired for max_jobs after 3 jobs: %+v", first, s.Retired)
	}
}

// A worker the exec_ttl watchdog kills is counted as such, not as a crash.
func TestExecTTLKillIsItsOwnReason(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, ExecTTL: 200 * time.Millisecond})
	if _, err := p.Exec(context.Background(), nil, []byte("sleep:5000")); err != ErrExecTimeout {
		t.Fatalf("err %v, want ErrExecTimeout", err)
	}
	waitFor(t, func() bool { return p.Stats().Restarts[ReasonExecTTL] == 1 }, "the kill counted under exec_ttl")
	if n := p.Stats().Restarts[ReasonCrash]; n != 0 {
		t.Errorf("%d crashes counted for an exec_ttl kill", n)
	}
}
