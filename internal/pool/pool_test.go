package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func phpCommand(t testing.TB, script string) []string {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"php", "-n", "-d", "display_errors=stderr", abs}
}

func newPool(t testing.TB, o Options) *Pool {
	t.Helper()
	if o.Command == nil {
		o.Command = phpCommand(t, "testdata/worker.php")
	}
	if o.NumWorkers == 0 {
		o.NumWorkers = 2
	}
	if o.AllocateTimeout == 0 {
		o.AllocateTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if testing.Verbose() {
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
	}
	o.SocketDir = t.TempDir()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Shutdown(ctx)
	})
	return p
}

func run(t testing.TB, p *Pool, body string) (string, error) {
	t.Helper()
	r, err := p.Exec(context.Background(), nil, []byte(body))
	if err != nil {
		return "", err
	}
	if string(r.Context) != "ctx" {
		t.Errorf("context %q, want ctx", r.Context)
	}
	return string(r.Body), nil
}

func must(t testing.TB, p *Pool, body string) string {
	t.Helper()
	s, err := run(t, p, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return s
}

func TestEchoOverEveryRelay(t *testing.T) {
	for _, relay := range []string{"pipes", "unix", "tcp"} {
		t.Run(relay, func(t *testing.T) {
			p := newPool(t, Options{Relay: relay, Pipeline: 4})
			var wg sync.WaitGroup
			for i := 0; i < 200; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprintf("msg-%d-%s", i, strings.Repeat("x", i*97))
					if got := must(t, p, "echo:"+want); got != want {
						t.Errorf("got %q want %q", got, want)
					}
				}()
			}
			wg.Wait()
		})
	}
}

func TestLargePayloadRoundTrip(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	big := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB
	if got := must(t, p, "echo:"+big); got != big {
		t.Fatalf("4 MiB echo came back as %d bytes", len(got))
	}
}

func TestErrorFrameFailsOnlyThatJob(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	pid := must(t, p, "pid")
	_, err := run(t, p, "error")
	var je *JobError
	if !errors.As(err, &je) || je.Message != "it failed" {
		t.Fatalf("want JobError, got %v", err)
	}
	if again := must(t, p, "pid"); again != pid {
		t.Fatalf("worker replaced after an ERROR frame: %s -> %s", pid, again)
	}
}

func TestCrashFailsOnlyItsJobAndPoolRefills(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 2})
	if _, err := run(t, p, "crash"); !errors.Is(err, ErrCrashed) {
		t.Fatalf("want ErrCrashed, got %v", err)
	}
	for i := 0; i < 20; i++ {
		must(t, p, "echo:ok")
	}
	waitFor(t, func() bool { return countState(p, "ready") == 2 }, "pool refilled to 2 ready workers")
}

func TestCrashWithJobsInFlight(t *testing.T) {
	// The five jobs that arrive while the only worker runs the first one leave
	// in one write when it is answered. The worker answers two of them and
	// dies on the third, holding the last two: exactly those three fail.
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 8})
	g := newGate(t)
	first := start(p, context.Background(), g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	var calls []*call
	for i, body := range []string{"echo:b1", "echo:b2", "crash", "echo:d1", "echo:d2"} {
		calls = append(calls, start(p, context.Background(), body))
		waitCounts(t, p, jobCounts{held: 2 + i, sent: 1})
	}
	g.open(t)
	if c := first.wait(); c.err != nil {
		t.Errorf("%s: %v", c.body, c.err)
	}
	for i, c := range calls {
		c.wait()
		if i < 2 && (c.err != nil || c.out != c.body[5:]) {
			t.Errorf("%s, answered before the crash: %q, %v", c.body, c.out, c.err)
		}
		if i >= 2 && !errors.Is(c.err, ErrCrashed) {
			t.Errorf("%s, held by the worker when it died: %v, want ErrCrashed", c.body, c.err)
		}
	}
	must(t, p, "echo:after")
}

func TestWorkerAskingToStopIsRetiredCleanly(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	first := must(t, p, "pid")
	if got := must(t, p, "retire"); got != "retiring" {
		t.Fatal(got)
	}
	waitFor(t, func() bool { s, err := run(t, p, "pid"); return err == nil && s != first }, "a replacement worker")
}

func TestMaxJobsRecycles(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, MaxJobs: 3})
	pids := map[string]int{}
	for i := 0; i < 9; i++ {
		pids[must(t, p, "pid")]++
	}
	if len(pids) != 3 {
		t.Fatalf("9 jobs at max_jobs=3 ran on %d workers: %v", len(pids), pids)
	}
	for pid, n := range pids {
		if n != 3 {
			t.Fatalf("worker %s ran %d jobs", pid, n)
		}
	}
}

func TestFramesForABusyWorkerLeaveInOneWrite(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 16})
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
	g := newGate(t)
	job(g.job("hold"))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	for i := range 10 { // arrive one by one while the worker is busy
		job("echo:x")
		waitCounts(t, p, jobCounts{held: 2 + i, sent: 1})
	}
	g.open(t)
	wg.Wait()
	if w := p.Workers()[0]; w.Jobs != 11 || w.Writes != 2 {
		t.Fatalf("%d jobs in %d writes, want 11 in 2 (the first job, then the ten held ones together)", w.Jobs, w.Writes)
	}
}

func TestJobsHeldForADyingWorkerRunElsewhere(t *testing.T) {
	// Jobs that arrive while the only worker is busy wait in the server for its
	// answers; the worker dies instead. Only the job it was running fails: the
	// others never reached it and run on its replacement.
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 8})
	g := newGate(t)
	dying := make(chan error, 1)
	go func() { _, err := run(t, p, g.job("holddie")); dying <- err }()
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := run(t, p, "echo:held"); err != nil || got != "held" {
				t.Errorf("held job: %q, %v; want it run on the replacement", got, err)
			}
		}()
	}
	waitCounts(t, p, jobCounts{held: 4, sent: 1})
	g.open(t)
	if err := <-dying; !errors.Is(err, ErrCrashed) {
		t.Fatalf("the running job: %v, want ErrCrashed", err)
	}
	wg.Wait()
}

func TestTTLAndIdleTTLRecycle(t *testing.T) {
	for _, o := range []Options{{TTL: 300 * time.Millisecond}, {IdleTTL: 300 * time.Millisecond}} {
		o.NumWorkers = 1
		p := newPool(t, o)
		first := must(t, p, "pid")
		// Polling Workers runs no job, so the worker stays idle and both limits apply.
		waitFor(t, func() bool {
			ws := p.Workers()
			return len(ws) == 1 && ws[0].State == "ready" && strconv.Itoa(ws[0].PID) != first
		}, "a new worker after the ttl")
		if got := must(t, p, "pid"); got == first {
			t.Fatalf("worker %s still serving", first)
		}
	}
}

func TestMaxMemoryRecycles(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, MaxMemory: 40 << 20})
	first := must(t, p, "pid")
	for i := 0; i < 3; i++ {
		must(t, p, "leak:16384") // 16 MiB each; php -n allows 128 MiB
	}
	waitFor(t, func() bool { s, err := run(t, p, "pid"); return err == nil && s != first }, "the leaking worker recycled")
}

func TestExecTTLKillsStuckWorker(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, ExecTTL: 300 * time.Millisecond})
	start := time.Now()
	if _, err := run(t, p, "sleep:10000"); !errors.Is(err, ErrExecTimeout) {
		t.Fatalf("want ErrExecTimeout, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("exec_ttl took %v", d)
	}
	if got := must(t, p, "echo:alive"); got != "alive" {
		t.Fatal(got)
	}
}

func TestExecTTLWithOtherJobsPresent(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 2, Pipeline: 4, ExecTTL: 500 * time.Millisecond})
	var wg sync.WaitGroup
	var stuck error
	wg.Add(1)
	go func() { defer wg.Done(); _, stuck = run(t, p, "sleep:10000") }()
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	// The other worker keeps serving while one is stuck: least-loaded routing.
	for i := 0; i < 20; i++ {
		must(t, p, "echo:x")
	}
	wg.Wait()
	if !errors.Is(stuck, ErrExecTimeout) {
		t.Fatalf("stuck job: %v", stuck)
	}
}

func TestExecTTLCountsFromJobStartOnSequentialWorkers(t *testing.T) {
	// Four 300 ms jobs queued on one worker take 1.2 s in all; none exceeds a
	// 500 ms exec_ttl because each clock starts when the previous job is answered.
	p := newPool(t, Options{NumWorkers: 1, Pipeline: 4, ExecTTL: 500 * time.Millisecond})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := run(t, p, "sleep:300"); err != nil {
				t.Errorf("queued job failed: %v", err)
			}
		}()
	}
	wg.Wait()
}

func TestQueueFullAndAllocateTimeout(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, QueueSize: 1, AllocateTimeout: time.Second})
	go p.Exec(context.Background(), nil, []byte(newGate(t).job("hold")))
	waitCounts(t, p, jobCounts{held: 1, sent: 1})
	errc := make(chan error, 1)
	go func() { _, err := run(t, p, "echo:a"); errc <- err }()
	waitCounts(t, p, jobCounts{held: 1, sent: 1, queued: 1})
	if _, err := run(t, p, "echo:b"); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("want ErrQueueFull, got %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrNoWorker) {
		t.Fatalf("want ErrNoWorker, got %v", err)
	}
}

func TestBootFailuresQuotePHP(t *testing.T) {
	dir := t.TempDir()
	syntax := filepath.Join(dir, "syntax.php")
	os.WriteFile(syntax, []byte("<?php\nfunction ( {\n"), 0o644)
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"missing script", Options{Command: []string{"php", "-n", filepath.Join(dir, "nope.php")}}, "Could not open input file"},
		{"syntax error", Options{Command: []string{"php", "-n", "-d", "display_errors=stderr", syntax}}, "syntax error"},
		{"stray echo on the stdio relay", Options{Relay: "stdio", Env: []string{"STRAY_ECHO=1"}}, "Hello before handshake"},
		{"no such binary", Options{Command: []string{"/nonexistent/php"}}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Command == nil {
				c.o.Command = phpCommand(t, "testdata/worker.php")
			}
			c.o.NumWorkers = 1
			c.o.AllocateTimeout = 5 * time.Second
			c.o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			_, err := New(c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error quoting %q, got: %v", c.want, err)
			}
		})
	}
}

func pidsOf(p *Pool) map[int]bool {
	m := map[int]bool{}
	for _, w := range p.Workers() {
		if w.State == "ready" || w.State == "working" {
			m[w.PID] = true
		}
	}
	return m
}

func countState(p *Pool, s string) int {
	n := 0
	for _, w := range p.Workers() {
		if w.State == s {
			n++
		}
	}
	return n
}

func waitFor(t testing.TB, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
