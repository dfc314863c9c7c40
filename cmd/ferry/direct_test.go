package main

import (
	"encoding/json"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/pool"
)

func limitsOf(t *testing.T, env []string) map[string]any {
	t.Helper()
	var found []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, pool.DirectLimitsEnv+"="); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s given %d times in %q", pool.DirectLimitsEnv, len(found), env)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(found[0]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// FERRY_DIRECT_LIMITS carries the front's limits as the worker must apply
// them: the same meaning, durations in milliseconds, 0 for none.
func TestDirectLimits(t *testing.T) {
	c := mustConfig(t, `server:
  mode: direct
  max_header_size: 16KiB
  max_headers: 50
  max_body_size: 2MiB
  read_header_timeout: 1500us
  read_timeout: 0s
  write_timeout: 30s
  idle_timeout: 0s
  max_connections: 1000
  trusted_proxies: [10.0.0.1, "10.1.2.3/16", "::1", "::ffff:192.0.2.7"]
pool:
  command: php w.php
  num_workers: 3
  max_jobs: 500
`)
	got := limitsOf(t, poolOptions(c, slog.Default()).Env)
	want := map[string]any{
		"max_header_size": 16384.0, "max_headers": 50.0, "max_body_size": 2097152.0,
		"read_header_timeout_ms": 2.0, // rounded up: under a millisecond is not "none"
		"read_timeout_ms":        0.0,
		"write_timeout_ms":       30000.0,
		"idle_timeout_ms":        0.0, // idle_timeout 0 is read_timeout's, here none
		"max_connections":        333.0,
		"max_jobs":               500.0,
		"trusted_proxies":        []any{"10.0.0.1/32", "10.1.0.0/16", "::1/128", "192.0.2.7/32"},
		"underscores_in_headers": 0.0, // dropped, as nginx and the front drop them
		"uploads": map[string]any{"dir": "", "max_files": 20.0, "max_parts": 1000.0, "max_part_header_size": 16384.0,
			"forbid": []any{}},
	}
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Errorf("limits\n got %s\nwant %s", g, w)
	}

	c.Server.UnderscoreHeaders = true
	if got := limitsOf(t, poolOptions(c, slog.Default()).Env)["underscores_in_headers"]; got != 1.0 {
		t.Errorf("underscores_in_headers %v with the setting on, want 1", got)
	}
	c.Server.UnderscoreHeaders = false

	// idle_timeout 0 takes read_timeout, as in the front.
	c.Server.ReadTimeout = 7e9
	if got := limitsOf(t, poolOptions(c, slog.Default()).Env)["idle_timeout_ms"]; got != 7000.0 {
		t.Errorf("idle_timeout_ms %v, want read_timeout's 7000", got)
	}
}

// max_connections is split so that the workers together never exceed it:
// an elastic pool's by max_workers, a pool of one per CPU by the CPUs; each
// gets at least 1, as 0 would mean no limit; 0 stays no limit.
func TestDirectLimitsSplitMaxConnections(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, c := range []struct {
		yaml string
		want float64
	}{
		{"num_workers: 2\n  max_workers: 8", 125},
		{"num_workers: 4", 250},
		{"num_workers: 0", float64(1000 / cpus)},
	} {
		cfg := mustConfig(t, "server: {mode: direct, max_connections: 1000}\npool:\n  command: php w.php\n  "+c.yaml+"\n")
		if got := limitsOf(t, poolOptions(cfg, slog.Default()).Env)["max_connections"]; got != c.want {
			t.Errorf("%s: max_connections %v, want %v", c.yaml, got, c.want)
		}
	}
	few := mustConfig(t, "server: {mode: direct, max_connections: 3}\npool: {command: php w.php, num_workers: 8}\n")
	if got := limitsOf(t, poolOptions(few, slog.Default()).Env)["max_connections"]; got != 1.0 {
		t.Errorf("3 connections over 8 workers: %v each, want 1", got)
	}
	none := mustConfig(t, "server: {mode: direct, max_connections: 0}\npool: {command: php w.php, num_workers: 8}\n")
	if got := limitsOf(t, poolOptions(none, slog.Default()).Env)["max_connections"]; got != 0.0 {
		t.Errorf("no limit: %v, want 0", got)
	}
}

// Front mode gives the workers nothing of direct mode; a reload gives the
// new generation the limits of the new file (max_jobs, the worker count).
func TestDirectLimitsFollowTheModeAndReloads(t *testing.T) {
	front := mustConfig(t, "pool: {command: php w.php}\n")
	for _, kv := range poolOptions(front, slog.Default()).Env {
		if strings.HasPrefix(kv, "FERRY_DIRECT") {
			t.Errorf("front mode gives the workers %s", kv)
		}
	}
	running := mustConfig(t, "server: {mode: direct, max_connections: 100}\npool: {command: php w.php, num_workers: 2, max_jobs: 10}\n")
	next := mustConfig(t, "server: {mode: direct, max_connections: 100}\npool: {command: php w.php, num_workers: 4, max_jobs: 20}\n")
	merged, restart := liveChanges(running, next)
	if len(restart) != 0 {
		t.Fatalf("restart needed for %v", restart)
	}
	l := limitsOf(t, poolOptions(merged, slog.Default()).Settings().Env)
	if l["max_jobs"] != 20.0 || l["max_connections"] != 25.0 {
		t.Errorf("after the reload: max_jobs %v, max_connections %v; want 20 and 25", l["max_jobs"], l["max_connections"])
	}
	// The mode itself is the listener's: it needs a restart.
	toFront := mustConfig(t, "pool: {command: php w.php, num_workers: 2, max_jobs: 10}\nserver: {max_connections: 100}\n")
	if _, restart := liveChanges(running, toFront); !slices.Contains(restart, "server.mode") {
		t.Errorf("changing server.mode is not named as needing a restart: %v", restart)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
