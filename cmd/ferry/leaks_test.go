package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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
	if _, err := loadConfig("workers", []string{"--leak-watch"}); err == nil {
		t.Error("--leak-watch accepted by a verb that starts no worker")
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
