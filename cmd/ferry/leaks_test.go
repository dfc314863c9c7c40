package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLeakWatchFlagAndWorkerEnvironment(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	cfgPath := filepath.Join(t.TempDir(), "ferry.yaml")
	if err := os.WriteFile(cfgPath, []byte("pool:\n  leak_watch_every: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off, err := loadConfig("serve", []string{"-c", cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	if off.Pool.LeakWatch || slices.Contains(poolOptions(off, discardLogger()).Env, "FERRY_LEAK_WATCH=1") {
		t.Fatal("leak watch on without being asked for")
	}
	on, err := loadConfig("serve", []string{"--leak-watch", "-c", cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	env := poolOptions(on, discardLogger()).Env
	for _, want := range []string{"FERRY_LEAK_WATCH=1", "FERRY_LEAK_WATCH_EVERY=7", "FERRY_LEAK_WATCH_WARMUP=10"} {
		if !slices.Contains(env, want) {
			t.Errorf("worker environment lacks %s: %v", want, env)
		}
	}
	if slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "FERRY_LEAK_WATCH_REPLAY=") }) {
		t.Errorf("replay paths in the environment though none are configured: %v", env)
	}
	if _, err := loadConfig("workers", []string{"--leak-watch"}); err == nil {
		t.Error("--leak-watch accepted by a verb that starts no worker")
	}
}

func TestLeakWatchReplayPaths(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("pool:\n  leak_watch: true\n  leak_watch_replay: [\"/\", \"/a,b\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig("serve", []string{"-c", good})
	if err != nil {
		t.Fatal(err)
	}
	if env := poolOptions(c, discardLogger()).Env; !slices.Contains(env, `FERRY_LEAK_WATCH_REPLAY=["/","/a,b"]`) {
		t.Errorf("worker environment lacks the replay paths as JSON: %v", env)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("pool:\n  leak_watch: true\n  leak_watch_replay: [\"/ok\", \"report?x=1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loadConfig("serve", []string{"-c", bad})
	if err == nil || !strings.Contains(err.Error(), "pool.leak_watch_replay[1]") {
		t.Fatalf("a replay path without / and with a query: got %v, want an error naming pool.leak_watch_replay[1]", err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
