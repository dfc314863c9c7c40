package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// spoolDirs lists the worker directories in base.
func spoolDirs(t testing.TB, base string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(base, "ferry-spool-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// answerFile is the path a "spool" job's head names.
func answerFile(t testing.TB, r Result) string {
	t.Helper()
	var head struct{ File struct{ Path string } }
	if err := json.Unmarshal(r.Context, &head); err != nil || head.File.Path == "" {
		t.Fatalf("head %q: %v", r.Context, err)
	}
	return head.File.Path
}

// Each worker has a directory of its own, 0700, named in FERRY_SPOOL_DIR,
// removed with what is in it once the worker has died.
func TestSpoolDirectoryGoesWithItsWorker(t *testing.T) {
	base := t.TempDir()
	p := newPool(t, Options{NumWorkers: 2, SpoolDir: base})
	dirs := spoolDirs(t, base)
	if len(dirs) != 2 {
		t.Fatalf("spool directories for 2 workers: %v", dirs)
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", d, st.Mode(), err)
		}
	}
	if _, err := p.Exec(context.Background(), nil, []byte("spooldie")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("spooldie: %v", err)
	}
	// The dead worker's directory and its file go; the replacement gets one.
	waitFor(t, func() bool {
		now := spoolDirs(t, base)
		gone := 0
		for _, d := range dirs {
			if _, err := os.Stat(d); os.IsNotExist(err) {
				gone++
			}
		}
		return len(now) == 2 && gone == 1 && countState(p, "ready") == 2
	}, "the dead worker's spool directory to be replaced")
}

// A worker that exits right after an answer naming a file in its directory
// (retired after that job, say) leaves the file to the caller until it
// settles the answer: the caller opens the file after Exec returns, and the
// worker may be gone by then.
func TestSpoolOutlivesItsWorkerUntilTheAnswerIsSettled(t *testing.T) {
	base := t.TempDir()
	p := newPool(t, Options{NumWorkers: 1, SpoolDir: base})
	old := spoolDirs(t, base)
	r, err := p.Exec(context.Background(), nil, []byte("spoolexit"))
	if err != nil {
		t.Fatal(err)
	}
	path := answerFile(t, r)
	waitFor(t, func() bool {
		return len(spoolDirs(t, base)) == 2 && countState(p, "ready") == 1
	}, "the worker to exit and its replacement to be ready")
	if b, err := os.ReadFile(path); err != nil || string(b) != "spooled" {
		t.Fatalf("the answer's file went with its worker before the answer was settled: %q %v", b, err)
	}
	r.Settle()
	r.Settle() // twice does nothing
	if _, err := os.Stat(old[0]); !os.IsNotExist(err) {
		t.Fatalf("the exited worker's directory is still there once its answer settled: %v", err)
	}
	if dirs := spoolDirs(t, base); len(dirs) != 1 {
		t.Fatalf("spool directories: %v", dirs)
	}
	// An answer settled while its worker lives removes nothing.
	r, err = p.Exec(context.Background(), nil, []byte("spool"))
	if err != nil {
		t.Fatal(err)
	}
	r.Settle()
	if _, err := os.Stat(answerFile(t, r)); err != nil {
		t.Fatalf("a live worker's file was removed: %v", err)
	}
}

// A server killed with SIGKILL leaves its workers' directories behind: the
// next pool start removes them, and never those of a server still running.
func TestSpoolsOfAGoneServerAreSwept(t *testing.T) {
	base := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(base, fmt.Sprintf("ferry-spool-%d-1", gone.Process.Pid))
	alive := filepath.Join(base, fmt.Sprintf("ferry-spool-%d-2", os.Getppid()))
	for _, d := range []string{dead, alive} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	newPool(t, Options{NumWorkers: 1, SpoolDir: base})
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the directory of a server that is gone is still there: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("the directory of a running server was removed: %v", err)
	}
}
