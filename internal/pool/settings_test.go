package pool

import (
	"context"
	"testing"
)

// ReloadWith boots the new generation with new settings and makes them the
// pool's, for the replacements started later too; a reload that fails keeps
// the old ones.
func TestReloadWithAppliesNewSettings(t *testing.T) {
	ctx := context.Background()
	p := newPool(t, Options{NumWorkers: 1})
	base := p.opt.Settings()
	if a, b := must(t, p, "pid"), must(t, p, "pid"); a != b {
		t.Fatalf("one worker, no max_jobs: pids %s and %s", a, b)
	}

	bad := base
	bad.Command, bad.NumWorkers = []string{"php", "-n", "/nonexistent/worker.php"}, 3
	if err := p.ReloadWith(ctx, bad); err == nil {
		t.Fatal("a reload to a command that cannot start succeeded")
	}
	if p.Size() != 1 {
		t.Fatalf("size %d after a failed reload, want the old 1", p.Size())
	}
	// The replacement of a worker that dies is started with the old command.
	pid := must(t, p, "pid")
	start(p, ctx, "crash").wait()
	waitFor(t, func() bool { return oneGeneration(p) && must(t, p, "pid") != pid }, "a replacement with the old command")

	next := base
	next.NumWorkers, next.MaxJobs = 2, 1
	if err := p.ReloadWith(ctx, next); err != nil {
		t.Fatal(err)
	}
	if p.Size() != 2 {
		t.Fatalf("size %d after the reload, want 2", p.Size())
	}
	waitFor(t, func() bool { return oneGeneration(p) }, "2 ready workers of the new generation")
	// max_jobs 1, for the new workers and their replacements alike: no
	// worker answers twice.
	seen := map[string]bool{}
	for range 4 {
		pid := must(t, p, "pid")
		if seen[pid] {
			t.Fatalf("worker %s answered twice under max_jobs 1", pid)
		}
		seen[pid] = true
	}
}
