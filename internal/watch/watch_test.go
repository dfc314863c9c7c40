package watch

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"src/**/*.php", "src/a.php", true},
		{"src/**/*.php", "src/x/y/a.php", true},
		{"src/**/*.php", "src/x/a.txt", false},
		{"src/**/*.php", "lib/a.php", false},
		{"*.php", "a.php", true},
		{"*.php", "x/a.php", false},
		{"**/*.php", "x/a.php", true},
		{"/abs/**", "/abs/x/y", true},
		{"config/app.yaml", "config/app.yaml", true},
		{"config/app.yaml", "config/other.yaml", false},
		{"src/*/[ab].php", "src/q/b.php", true},
	} {
		if got := Match(c.glob, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
	for glob, want := range map[string]string{"src/**/*.php": "src", "*.php": ".", "/abs/**": "/abs", "config/app.yaml": "config", "a/b/c*/d": "a/b"} {
		if got := Root(glob); got != want {
			t.Errorf("Root(%q) = %q, want %q", glob, got, want)
		}
	}
}

// A burst of writes, in a directory created after the start too, is one
// reload; a file no glob matches is none.
func TestBurstIsOneReload(t *testing.T) {
	dir := t.TempDir()
	reloads := make(chan struct{}, 10)
	w, err := Start([]string{filepath.Join(dir, "**/*.php")}, func() { reloads <- struct{}{} }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		os.WriteFile(filepath.Join(dir, "new", "a.php"), []byte("<?php "+string(rune('a'+i%26))), 0o644)
		os.WriteFile(filepath.Join(dir, "b.php"), []byte("<?php"), 0o644)
		select {
		case <-reloads:
		case <-time.After(2 * Debounce):
			if time.Now().After(deadline) {
				t.Fatal("no reload after writing .php files")
			}
			continue
		}
		break
	}
	select {
	case <-reloads:
		t.Fatal("one burst reloaded twice")
	case <-time.After(3 * Debounce):
	}
	// The directory made after the start is watched: its Create event came
	// before the writes that caused the reload.
	os.WriteFile(filepath.Join(dir, "new", "c.php"), []byte("<?php"), 0o644)
	select {
	case <-reloads:
	case <-time.After(5 * time.Second):
		t.Fatal("a file in a directory created after the start did not reload")
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("y"), 0o644)
	select {
	case <-reloads:
		t.Fatal("a .txt change reloaded")
	case <-time.After(3 * Debounce):
	}
}
