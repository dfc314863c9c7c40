package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/config"
)

func mustConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(yaml), "ferry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// What shapes a worker is applied by a reload; what the generations share,
// or the front holds, is named as needing a restart and keeps its value.
func TestLiveChanges(t *testing.T) {
	running := mustConfig(t, "pool: {num_workers: 1, command: php a.php}\n")
	next := mustConfig(t, `server: {address: "127.0.0.1:9"}
pool:
  num_workers: 3
  max_workers: 6
  scale_down_after: 1m
  command: php b.php
  env: {A: b}
  exec_ttl: 5s
  fibers: true
  php: {ini: {max_input_vars: "5", memory_limit: 1G}}
`)
	m, restart := liveChanges(running, next)
	want := []string{"server.address", "pool.fibers", "pool.php.ini.max_input_vars"}
	if !slices.Equal(restart, want) {
		t.Fatalf("restart %q, want %q", restart, want)
	}
	if m.Server.Address != running.Server.Address || m.Pool.Fibers || m.Pool.NumWorkers != 3 ||
		m.Pool.MaxWorkers != 6 || m.Pool.ScaleDownAfter != time.Minute ||
		m.Pool.Command[1] != "b.php" || m.Pool.Env["A"] != "b" || m.Pool.PHP.Ini["memory_limit"] != "1G" {
		t.Fatalf("merged: %+v %+v", m.Server.Address, m.Pool)
	}
	if running.Pool.NumWorkers != 1 {
		t.Fatal("liveChanges changed the running config")
	}
}

// docs/laravel.md said `bin/ferry reload` after `bin/ferry serve -c
// path/to/app/ferry.yaml`: run from the Ferry checkout, it found no config and
// failed on "dial unix ferry.sock" with nothing pointing at -c.
func TestReloadWithoutAConfigFileHereAsksForC(t *testing.T) {
	t.Chdir(t.TempDir())
	err := reload(nil)
	if err == nil || !strings.Contains(err.Error(), "no ferry.yaml (nor .rr.yaml) in ") || !strings.Contains(err.Error(), "-c /path/to/ferry.yaml") {
		t.Fatalf("want the error to ask for -c, got: %v", err)
	}
}
