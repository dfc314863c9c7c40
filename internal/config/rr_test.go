package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const rrFull = `version: "3"
rpc:
  listen: tcp://127.0.0.1:6001
server:
  command: "php worker.php --flag"
  relay: unix://rr.sock
  env:
    APP_ENV: prod
    DSN: ${RR_TEST_DSN:-sqlite}
http:
  address: 0.0.0.0:8081
  max_request_size: 100
  middleware: [static, headers]
  static:
    dir: /tmp
    forbid: [".php"]
  pool:
    num_workers: 4
    max_jobs: 500
    allocate_timeout: 20s
    destroy_timeout: 3s
    dynamic_allocator:
      max_workers: 6
      spawn_rate: 2
      idle_timeout: 30s
    supervisor:
      watch_tick: 1s
      ttl: 1h
      idle_ttl: 10m
      exec_ttl: 30s
      max_worker_memory: 256
kv:
  local: {driver: memory}
jobs:
  consume: []
logs:
  level: warn
  mode: production
`

func TestRoadRunnerSubsetMapsOntoFerry(t *testing.T) {
	c, ignored, err := ParseRoadRunner([]byte(rrFull), ".rr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, s := c.Pool, c.Server
	checks := []struct {
		name      string
		got, want any
	}{
		{"protocol", p.Protocol, ProtocolRoadRunner},
		{"command", strings.Join(p.Command, " "), "php worker.php --flag"},
		{"relay", p.Relay, RelayUnix},
		{"env", p.Env["APP_ENV"] + "," + p.Env["DSN"], "prod,sqlite"},
		{"RR_RPC", p.Env["RR_RPC"], "tcp://127.0.0.1:6001"},
		{"address", s.Address, "0.0.0.0:8081"},
		{"max_request_size", s.MaxBodySize, 100 * MiB},
		{"frame fits the body", p.MaxFrameSize >= s.MaxBodySize, true},
		{"num_workers", p.NumWorkers, 4},
		{"max_jobs", p.MaxJobs, 500},
		{"dynamic_allocator.max_workers, on top of num_workers", p.MaxWorkers, 10},
		{"dynamic_allocator.idle_timeout", p.ScaleDownAfter, 30 * time.Second},
		{"allocate_timeout", p.AllocateTimeout, 20 * time.Second},
		{"destroy_timeout", p.DestroyTimeout, 3 * time.Second},
		{"ttl", p.TTL, time.Hour},
		{"idle_ttl", p.IdleTTL, 10 * time.Minute},
		{"exec_ttl", p.ExecTTL, 30 * time.Second},
		{"max_worker_memory", p.MaxMemory, 256 * MiB},
		{"static.dir", s.Static.Dir, "/tmp"},
		{"logs.level", c.Log.Level, "warn"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	want := "rpc, kv, jobs, logs.mode, http.middleware.headers, http.static.forbid, http.pool.dynamic_allocator.spawn_rate, http.pool.supervisor.watch_tick"
	if got := strings.Join(ignored, ", "); got != want {
		t.Errorf("ignored: %s\nwant:    %s", got, want)
	}
}

func TestRoadRunnerDefaultsAndErrors(t *testing.T) {
	c, ignored, err := ParseRoadRunner([]byte("version: '3'\nserver:\n  command: [php, w.php]\n"), "rr.yml")
	if err != nil || len(ignored) != 0 {
		t.Fatalf("minimal file: %v %v", err, ignored)
	}
	if c.Pool.Relay != RelayPipes || c.Server.Address != Default().Server.Address || c.Pool.Protocol != ProtocolRoadRunner {
		t.Fatalf("defaults: %+v", c.Pool)
	}
	for src, want := range map[string]string{
		"version: '3'\nhttp:\n  address: :8080\n":                                                            "server.command: is required",
		"version: '2.7'\nserver:\n  command: php w.php\n":                                                    `version "3"`,
		"version: '3'\nserver:\n  command: php w.php\n  relay: pipe\n":                                       "must be pipes, tcp://host:port or unix://path",
		"version: '3'\nserver:\n  command: php w.php\nhttp:\n  pool:\n    supervisor:\n      exec_ttl: 30\n": "missing unit",
		"version: '3'\nserver:\n  command: php w.php\nhttp:\n  pool:\n    num_workers: many\n":               "whole number",
	} {
		_, _, err := ParseRoadRunner([]byte(src), ".rr.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", src, err, want)
		}
	}
}

func TestRoadRunnerFileDetection(t *testing.T) {
	cases := []struct {
		path, data string
		want       bool
	}{
		{".rr.yaml", "", true},
		{"deploy/.rr.dev.yml", "", true},
		{"config.yaml", "version: '3'\nserver:\n  command: php w.php\n", true},
		{"config.yaml", "version: '3'\nhttp:\n  address: :80\n", true},
		{"ferry.yaml", "server:\n  address: :80\npool:\n  command: php w.php\n", false},
		{"ferry.yaml", "not: [yaml", false},
	}
	for _, c := range cases {
		if got := IsRoadRunnerFile(c.path, []byte(c.data)); got != c.want {
			t.Errorf("IsRoadRunnerFile(%q, %q) = %v", c.path, c.data, got)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "any.yaml")
	os.WriteFile(path, []byte(rrFull), 0o644)
	if c, ignored, rr, err := LoadAny(path); err != nil || !rr || c.Pool.NumWorkers != 4 || len(ignored) == 0 {
		t.Fatalf("LoadAny: %v %v %v", err, rr, ignored)
	}
	os.WriteFile(path, []byte("pool:\n  protocol: roadrunner-json\n"), 0o644)
	if c, _, rr, err := LoadAny(path); err != nil || rr || c.Pool.Protocol != ProtocolRoadRunnerJSON {
		t.Fatalf("a ferry.yaml with pool.protocol: %v %v", err, rr)
	}
}

func TestProtocolIsChecked(t *testing.T) {
	if errs := parseErrors(t, "pool:\n  protocol: fcgi\n"); !strings.Contains(errs[0], "pool.protocol: must be one of ferry, roadrunner, roadrunner-json") {
		t.Fatal(errs)
	}
	if errs := parseErrors(t, "pool:\n  protocol: roadrunner\n  fibers: true\n"); !strings.Contains(strings.Join(errs, "\n"), "pool.fibers must be off") {
		t.Fatal(errs)
	}
}

func TestRoadRunnerSSLAndHTTP2MapOntoServerTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for _, f := range []string{cert, key} {
		if err := os.WriteFile(f, []byte("pem"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	src := "version: '3'\nserver:\n  command: php w.php\nhttp:\n  address: 127.0.0.1:8080\n" +
		"  ssl:\n    address: 127.0.0.1:8892\n    redirect: true\n    cert: " + cert + "\n    key: " + key + "\n    root_ca: root.crt\n" +
		"  http2:\n    h2c: true\n    max_concurrent_streams: 128\n"
	c, ignored, err := ParseRoadRunner([]byte(src), ".rr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if s.TLS.Address != "127.0.0.1:8892" || s.TLS.Cert != cert || s.TLS.Key != key || !s.TLS.Redirect {
		t.Errorf("tls: %+v", s.TLS)
	}
	if !s.HTTP2.H2C || s.HTTP2.MaxConcurrentStreams != 128 {
		t.Errorf("http2: %+v", s.HTTP2)
	}
	// Client certificates are not checked by Ferry: said, not dropped.
	if got := strings.Join(ignored, ", "); got != "http.ssl.root_ca" {
		t.Errorf("ignored: %s", got)
	}
	// ssl without an address listens on :443, as RoadRunner does.
	c, _, err = ParseRoadRunner([]byte("version: '3'\nserver:\n  command: php w.php\nhttp:\n  ssl:\n    cert: "+cert+"\n    key: "+key+"\n"), ".rr.yaml")
	if err != nil || c.Server.TLS.Address != ":443" {
		t.Errorf("default ssl address: %v %q", err, c.Server.TLS.Address)
	}
	if _, _, err := ParseRoadRunner([]byte("version: '3'\nserver:\n  command: php w.php\nhttp:\n  http2:\n    h2c: maybe\n"), ".rr.yaml"); err == nil || !strings.Contains(err.Error(), "true or false") {
		t.Errorf("h2c: maybe: %v", err)
	}
}
