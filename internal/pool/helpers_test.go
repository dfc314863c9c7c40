package pool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// jobCounts is where the pool's jobs are: taken by a worker (held, written or
// not), written to it and not answered, and waiting for a worker.
type jobCounts struct{ held, sent, queued int }

func counts(p *Pool) jobCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := jobCounts{queued: len(p.waitq)}
	for _, w := range p.workers {
		c.held += w.load
		w.mu.Lock()
		c.sent += w.sent
		w.mu.Unlock()
	}
	return c
}

// waitCounts waits until the pool's jobs are where want says.
func waitCounts(t testing.TB, p *Pool, want jobCounts) {
	t.Helper()
	waitFor(t, func() bool { return counts(p) == want }, fmt.Sprintf("jobs at %+v", want))
}

// call is a job running in the background.
type call struct {
	body string
	out  string
	err  error
	done chan struct{}
}

func start(p *Pool, ctx context.Context, body string) *call {
	c := &call{body: body, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		r, err := p.Exec(ctx, nil, []byte(body))
		c.out, c.err = string(r.Body), err
	}()
	return c
}

func (c *call) wait() *call { <-c.done; return c }

// returned waits for c with a deadline, for a test whose failure is a job
// that does not return.
func (c *call) returned(d time.Duration) bool {
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (c *call) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// gate holds the jobs made with it in PHP until the test opens it, so a test
// decides when a "slow" job ends instead of guessing a duration. It opens by
// itself at cleanup, before the pool shuts down.
type gate struct{ path string }

func newGate(t testing.TB) *gate {
	g := &gate{path: filepath.Join(t.TempDir(), "gate")}
	t.Cleanup(func() { g.open(t) })
	return g
}

// job is a job body: "hold" answers when the gate opens, "holddie" exits then.
func (g *gate) job(cmd string) string { return cmd + ":" + g.path }

func (g *gate) open(t testing.TB) {
	if err := os.WriteFile(g.path, nil, 0o644); err != nil {
		t.Error(err)
	}
}
