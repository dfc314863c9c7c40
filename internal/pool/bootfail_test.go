package pool

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A front controller that prints its page and ends fails the same way in every
// worker: ferry serve on a 16-core machine printed the page and the advice 16
// times. It is said once, with the count.
func TestWorkersFailingAlikeAreReportedOnce(t *testing.T) {
	script := writePHP(t, "front.php", "<?php echo \"<html>page</html>\\n\";")
	_, err := New(Options{NumWorkers: 3, Command: []string{"php", "-n", script}, AllocateTimeout: 5 * time.Second, Logger: slog.New(&outRecs{})})
	if err == nil {
		t.Fatal("a script that ends started")
	}
	msg := err.Error()
	if n := strings.Count(msg, "failed to start"); n != 1 || !strings.HasPrefix(msg, "3 workers failed alike: worker ") {
		t.Fatalf("want one message for the 3 workers, got %d:\n%s", n, msg)
	}
	if !strings.Contains(msg, "ran to its end") || !strings.Contains(msg, "<html>page</html>") {
		t.Fatalf("the collapsed message lost its content:\n%s", msg)
	}
}

// `pool.command: php path/to/ferry/php/laravel/bin/ferry-laravel`, written from
// the shell's directory, failed with PHP's "Could not open input file" and no
// word of where PHP looked: workers run in pool.dir, not where ferry started.
func TestMissingRelativeScriptSaysWherePHPLooked(t *testing.T) {
	dir := t.TempDir()
	_, err := New(Options{NumWorkers: 1, Dir: dir, Command: []string{"php", "-n", "path/to/worker.php"}, AllocateTimeout: 5 * time.Second, Logger: slog.New(&outRecs{})})
	if err == nil || !strings.Contains(err.Error(), "PHP looked for path/to/worker.php in "+dir+", where workers run (pool.dir") {
		t.Fatalf("want where PHP looked, got: %v", err)
	}
	abs := filepath.Join(dir, "nope.php")
	_, err = New(Options{NumWorkers: 1, Dir: dir, Command: []string{"php", "-n", abs}, AllocateTimeout: 5 * time.Second, Logger: slog.New(&outRecs{})})
	if err == nil || !strings.Contains(err.Error(), "Could not open input file") || strings.Contains(err.Error(), "PHP looked for") {
		t.Fatalf("an absolute path needs no hint, got: %v", err)
	}
}
