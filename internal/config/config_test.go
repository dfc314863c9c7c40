package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"server.address", d.Server.Address, "127.0.0.1:8080"},
		{"server.read_header_timeout", d.Server.ReadHeaderTimeout, 10 * time.Second},
		{"server.read_timeout", d.Server.ReadTimeout, 60 * time.Second},
		{"server.write_timeout", d.Server.WriteTimeout, 60 * time.Second},
		{"server.idle_timeout", d.Server.IdleTimeout, 120 * time.Second},
		{"server.max_body_size", d.Server.MaxBodySize, Size(8 << 20)},
		{"server.max_header_size", d.Server.MaxHeaderSize, Size(64 << 10)},
		{"server.debug", d.Server.Debug, false},
		{"server.underscores_in_headers", d.Server.UnderscoreHeaders, false},
		{"server.access_log.enabled", d.Server.AccessLog.Enabled, false},
		{"server.access_log.format", d.Server.AccessLog.Format, "json"},
		{"server.access_log.path", d.Server.AccessLog.Path, "stderr"},
		{"server.request_id", d.Server.RequestID, false},
		{"server.drain_delay", d.Server.DrainDelay, time.Duration(0)},
		{"server.watch", d.Server.Watch, []string{}},
		{"admin.metrics_address", d.Admin.MetricsAddress, ""},
		{"admin.health_address", d.Admin.HealthAddress, ""},
		{"server.max_procs", d.Server.MaxProcs, 0},
		{"server.static.dir", d.Server.Static.Dir, ""},
		{"server.static.prefix", d.Server.Static.Prefix, "/"},
		{"server.static.forbid", d.Server.Static.Forbid, []string{".php", ".htaccess"}},
		{"server.static.cache_control", d.Server.Static.CacheControl, ""},
		{"pool.command", d.Pool.Command, []string{"php", "examples/hello/worker.php"}},
		{"pool.dir", d.Pool.Dir, ""},
		{"pool.env", d.Pool.Env, map[string]string{}},
		{"pool.relay", d.Pool.Relay, "pipes"},
		{"pool.num_workers", d.Pool.NumWorkers, 0},
		{"pool.max_jobs", d.Pool.MaxJobs, 0},
		{"pool.ttl", d.Pool.TTL, time.Duration(0)},
		{"pool.idle_ttl", d.Pool.IdleTTL, time.Duration(0)},
		{"pool.max_memory", d.Pool.MaxMemory, Size(0)},
		{"pool.exec_ttl", d.Pool.ExecTTL, 60 * time.Second},
		{"pool.allocate_timeout", d.Pool.AllocateTimeout, 60 * time.Second},
		{"pool.destroy_timeout", d.Pool.DestroyTimeout, 5 * time.Second},
		{"pool.queue_size", d.Pool.QueueSize, 1024},
		{"pool.pipeline", d.Pool.Pipeline, 32},
		{"pool.fibers", d.Pool.Fibers, false},
		{"pool.fiber_reuse", d.Pool.FiberReuse, true},
		{"pool.max_concurrency", d.Pool.MaxConcurrency, 64},
		{"pool.max_frame_size", d.Pool.MaxFrameSize, Size(64 << 20)},
		{"pool.php.opcache", d.Pool.PHP.Opcache, true},
		{"pool.php.preload", d.Pool.PHP.Preload, ""},
		{"pool.php.jit", d.Pool.PHP.JIT, ""},
		{"pool.php.ini", d.Pool.PHP.Ini, map[string]string{}},
		{"pool.respawn_backoff.min", d.Pool.RespawnBackoff.Min, 100 * time.Millisecond},
		{"pool.respawn_backoff.max", d.Pool.RespawnBackoff.Max, 5 * time.Second},
		{"admin.socket", d.Admin.Socket, "ferry.sock"},
		{"log.level", d.Log.Level, "info"},
		{"log.format", d.Log.Format, "text"},
		{"log.output", d.Log.Output, "stderr"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { deepEqual(t, c.got, c.want) })
	}
}

func TestDefaultReturnsFreshCopies(t *testing.T) {
	a := Default()
	a.Server.Static.Forbid[0] = "changed"
	a.Pool.Command[0] = "changed"
	a.Pool.Env["X"] = "1"
	b := Default()
	if b.Server.Static.Forbid[0] != ".php" || b.Pool.Command[0] != "php" || len(b.Pool.Env) != 0 {
		t.Fatalf("Default() shares state between calls: %+v", b)
	}
}

func TestEmptyDocumentsGiveDefaults(t *testing.T) {
	for _, src := range []string{"", "\n", "# only a comment\n", "---\n", "~\n"} {
		c, err := Parse([]byte(src), "ferry.yaml")
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		deepEqual(t, comparable(c), comparable(Default()))
	}
}

func TestParseOverridesOnlyGivenKeys(t *testing.T) {
	c := mustParse(t, `
server:
  address: "0.0.0.0:9000"
  debug: true
  static:
    prefix: /assets/
pool:
  command: php -d memory_limit=256M app/worker.php
  num_workers: 4
  max_jobs: 1000
  ttl: 1h
  max_memory: 128MiB
  env: {APP_ENV: prod, EMPTY: }
  php:
    opcache: false
`)
	want := Default()
	want.Server.Address = "0.0.0.0:9000"
	want.Server.Debug = true
	want.Server.Static.Prefix = "/assets/"
	want.Pool.Command = []string{"php", "-d", "memory_limit=256M", "app/worker.php"}
	want.Pool.NumWorkers = 4
	want.Pool.MaxJobs = 1000
	want.Pool.TTL = time.Hour
	want.Pool.MaxMemory = 128 * MiB
	want.Pool.Env = map[string]string{"APP_ENV": "prod", "EMPTY": ""}
	want.Pool.PHP.Opcache = false
	deepEqual(t, comparable(c), comparable(want))
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.yaml")
	if err := os.WriteFile(path, []byte("server:\n  static:\n    dir: "+dir+"\nlog:\n  level: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Server.Static.Dir != dir || c.Log.Level != "debug" {
		t.Fatalf("Load gave %+v", c)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("log:\n  level: loud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	want := bad + `:2: log.level: must be one of debug, info, warn, error, got "loud"`
	if err == nil || err.Error() != want {
		t.Fatalf("Load(bad) = %v, want %s", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("Load(missing) = %v, want a not-exist error naming the file", err)
	}
}

func TestLoadRejectsHugeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	data := []byte("# " + strings.Repeat("x", MaxFileSize) + "\n")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Load(big) = %v, want a size error", err)
	}
}

func TestValidateHandBuiltConfig(t *testing.T) {
	c := Default()
	c.Pool.Pipeline = 0
	c.Log.Format = "xml"
	err := c.Validate()
	want := "pool.pipeline: must be >= 1, got 0\nlog.format: must be one of text, json, got \"xml\""
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want\n%s", err, want)
	}
}

func TestErrorsUnwrap(t *testing.T) {
	_, err := Parse([]byte("pool:\n  pipeline: 0\n"), "f.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	if e.Source != "f.yaml" || e.Line != 2 || e.Path != "pool.pipeline" || e.Msg != "must be >= 1, got 0" {
		t.Fatalf("got %+v", e)
	}
}

func TestErrorFormatting(t *testing.T) {
	cases := []struct {
		e    Error
		want string
	}{
		{Error{Source: "a.yaml", Line: 3, Path: "x.y", Msg: "bad"}, "a.yaml:3: x.y: bad"},
		{Error{Source: "a.yaml", Path: "x.y", Msg: "bad"}, "a.yaml: x.y: bad"},
		{Error{Line: 3, Path: "x.y", Msg: "bad"}, "line 3: x.y: bad"},
		{Error{Path: "x.y", Msg: "bad"}, "x.y: bad"},
		{Error{Source: "a.yaml", Line: 1, Msg: "bad"}, "a.yaml:1: bad"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q want %q", got, c.want)
		}
	}
}

func TestTooManyErrorsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("server:\n")
	for i := range 100 {
		b.WriteString("  bogus" + strings.Repeat("x", i) + ": 1\n")
	}
	got := parseErrors(t, b.String())
	if len(got) != maxErrors+1 || !strings.Contains(got[maxErrors], "too many errors") {
		t.Fatalf("got %d errors, last %q", len(got), got[len(got)-1])
	}
}
