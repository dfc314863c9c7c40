package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each case sets one bad value on line 2 or 3 and expects exactly one error
// naming the key path and that line.
func TestValidationErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file.txt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("s", 108)
	cases := []struct{ src, want string }{
		// server
		{"server:\n  address: localhost\n", `ferry.yaml:2: server.address: must be host:port (e.g. "127.0.0.1:8080" or ":8080"), got "localhost"`},
		{"server:\n  address: \"127.0.0.1:http\"\n", `ferry.yaml:2: server.address: port must be a number from 0 to 65535, got "http"`},
		{"server:\n  address: \"127.0.0.1:70000\"\n", `ferry.yaml:2: server.address: port must be a number from 0 to 65535, got "70000"`},
		{"server:\n  address: \"a b:80\"\n", `ferry.yaml:2: server.address: invalid host "a b"`},
		{"server:\n  read_header_timeout: -1s\n", "ferry.yaml:2: server.read_header_timeout: must be >= 0, got -1s"},
		{"server:\n  read_timeout: -2s\n", "ferry.yaml:2: server.read_timeout: must be >= 0, got -2s"},
		{"server:\n  write_timeout: -1ms\n", "ferry.yaml:2: server.write_timeout: must be >= 0, got -1ms"},
		{"server:\n  idle_timeout: -1m\n", "ferry.yaml:2: server.idle_timeout: must be >= 0, got -1m0s"},
		{"server:\n  max_body_size: 0\n", "ferry.yaml:2: server.max_body_size: must be > 0, got 0"},
		{"server:\n  max_body_size: -1KiB\n", "ferry.yaml:2: server.max_body_size: must be > 0, got -1KiB"},
		{"server:\n  max_header_size: 100\n", "ferry.yaml:2: server.max_header_size: must be >= 1KiB, got 100"},
		{"server:\n  static:\n    dir: /definitely/not/here\n", `ferry.yaml:3: server.static.dir: directory "/definitely/not/here": no such file or directory`},
		{"server:\n  static:\n    dir: " + file + "\n", `ferry.yaml:3: server.static.dir: "` + file + `" is not a directory`},
		{"server:\n  static:\n    prefix: assets\n", `ferry.yaml:3: server.static.prefix: must start with "/", got "assets"`},
		{"server:\n  static:\n    forbid: [.php, \"\"]\n", "ferry.yaml:3: server.static.forbid[1]: must not be empty"},
		{"server:\n  static:\n    cache_control: \"a\\nb\"\n", "ferry.yaml:3: server.static.cache_control: must not contain line breaks"},
		{"server:\n  tls:\n    cert: " + file + "\n", `ferry.yaml:3: server.tls.address: must be set when server.tls.cert, key or redirect is (e.g. ":8443")`},
		{"server:\n  tls:\n    address: \":8443\"\n    cert: /definitely/not/here\n    key: " + file + "\n", `ferry.yaml:4: server.tls.cert: file "/definitely/not/here": no such file or directory`},
		{"server:\n  tls:\n    address: \":8443\"\n    cert: " + file + "\n", `ferry.yaml:3: server.tls.key: must name a PEM file when server.tls.address is set`},
		{"server:\n  address: \":8443\"\n  tls:\n    address: \":8443\"\n    cert: " + file + "\n    key: " + file + "\n", `ferry.yaml:4: server.tls.address: must differ from server.address, got ":8443" for both`},
		{"server:\n  http2:\n    max_concurrent_streams: 0\n", "ferry.yaml:3: server.http2.max_concurrent_streams: must be >= 1, got 0"},
		// observability
		{"server:\n  access_log:\n    format: clf\n", `ferry.yaml:3: server.access_log.format: must be one of json, combined, got "clf"`},
		{"server:\n  access_log:\n    enabled: true\n    path: /definitely/not/here/access.log\n", `ferry.yaml:4: server.access_log.path: directory "/definitely/not/here": no such file or directory`},
		{"server:\n  access_log:\n    path: \"\"\n", "ferry.yaml:3: server.access_log.path: must be stderr or a file path"},
		{"server:\n  drain_delay: -1s\n", "ferry.yaml:2: server.drain_delay: must be >= 0, got -1s"},
		{"server:\n  watch: [\"src/[a.php\"]\n", `ferry.yaml:2: server.watch[0]: "src/[a.php": bad pattern segment "[a.php"`},
		{"server:\n  watch: [\"/definitely/not/here/**/*.php\"]\n", `ferry.yaml:2: server.watch[0]: directory "/definitely/not/here": no such file or directory`},
		{"admin:\n  metrics_address: 9090\n", `ferry.yaml:2: admin.metrics_address: must be host:port (e.g. "127.0.0.1:8080" or ":8080"), got "9090"`},
		{"admin:\n  health_address: \"localhost:x\"\n", `ferry.yaml:2: admin.health_address: port must be a number from 0 to 65535, got "x"`},
		{"server:\n  tracing:\n    sample_ratio: 2\n", "ferry.yaml:3: server.tracing.sample_ratio: must be from 0 to 1, got 2"},
		{"server:\n  tracing:\n    sample_ratio: .nan\n", `ferry.yaml:3: server.tracing.sample_ratio: must be a number such as 0.25, got ".nan"`},
		{"server:\n  tracing:\n    endpoint: \"collector:4318\"\n", `ferry.yaml:3: server.tracing.endpoint: must be an http:// or https:// URL such as http://127.0.0.1:4318/v1/traces, got "collector:4318"`},
		// pool
		{"pool:\n  command: []\n", `ferry.yaml:2: pool.command: must not be empty (e.g. ["php", "worker.php"])`},
		{"pool:\n  command: \"  \"\n", `ferry.yaml:2: pool.command: must not be empty (e.g. ["php", "worker.php"])`},
		{"pool:\n  command:\n    - php\n    - \"\"\n", "ferry.yaml:4: pool.command[1]: must not be empty"},
		{"pool:\n  dir: /definitely/not/here\n", `ferry.yaml:2: pool.dir: directory "/definitely/not/here": no such file or directory`},
		{"pool:\n  env:\n    \"BAD NAME\": x\n", `ferry.yaml:3: pool.env.BAD NAME: invalid environment variable name "BAD NAME" (letters, digits and _, not starting with a digit)`},
		{"pool:\n  env:\n    A: \"x\\0y\"\n", "ferry.yaml:3: pool.env.A: value must not contain a NUL byte"},
		{"pool:\n  num_workers: 4\n  max_workers: 2\n", "ferry.yaml:3: pool.max_workers: max_workers 2 is below num_workers (4), the pool's floor: max_workers is how far the pool may grow (0: it stays at num_workers)"},
		{"pool:\n  max_workers: -1\n", "ferry.yaml:2: pool.max_workers: must be >= 0, got -1"},
		{"pool:\n  max_workers: 5000\n", "ferry.yaml:2: pool.max_workers: must be <= 4096, got 5000"},
		{"pool:\n  scale_up_after: 0s\n", "ferry.yaml:2: pool.scale_up_after: must be > 0, got 0s"},
		{"pool:\n  scale_down_after: -1s\n", "ferry.yaml:2: pool.scale_down_after: must be > 0, got -1s"},
		{"pool:\n  relay: socket\n", `ferry.yaml:2: pool.relay: must be one of pipes, unix, tcp, stdio, got "socket"`},
		{"pool:\n  num_workers: -1\n", "ferry.yaml:2: pool.num_workers: must be >= 0, got -1"},
		{"pool:\n  num_workers: 5000\n", "ferry.yaml:2: pool.num_workers: must be <= 4096, got 5000"},
		{"\n\n\n\n\n\n\n\n\n\npool:\n  max_jobs: -3\n", "ferry.yaml:12: pool.max_jobs: must be >= 0, got -3"},
		{"pool:\n  ttl: -1h\n", "ferry.yaml:2: pool.ttl: must be >= 0, got -1h0m0s"},
		{"pool:\n  idle_ttl: -1s\n", "ferry.yaml:2: pool.idle_ttl: must be >= 0, got -1s"},
		{"pool:\n  max_memory: -1MiB\n", "ferry.yaml:2: pool.max_memory: must be >= 0, got -1MiB"},
		{"pool:\n  exec_ttl: -1s\n", "ferry.yaml:2: pool.exec_ttl: must be >= 0, got -1s"},
		{"pool:\n  allocate_timeout: 0s\n", "ferry.yaml:2: pool.allocate_timeout: must be > 0, got 0s"},
		{"pool:\n  destroy_timeout: -5s\n", "ferry.yaml:2: pool.destroy_timeout: must be > 0, got -5s"},
		{"pool:\n  queue_size: 0\n", "ferry.yaml:2: pool.queue_size: must be >= 1, got 0"},
		{"pool:\n  queue_size: 2000000\n", "ferry.yaml:2: pool.queue_size: must be <= 1048576, got 2000000"},
		{"pool:\n  pipeline: 0\n", "ferry.yaml:2: pool.pipeline: must be >= 1, got 0"},
		{"pool:\n  pipeline: 1025\n", "ferry.yaml:2: pool.pipeline: must be <= 1024, got 1025"},
		{"pool:\n  max_concurrency: 0\n", "ferry.yaml:2: pool.max_concurrency: must be >= 1, got 0"},
		{"pool:\n  max_concurrency: 100001\n", "ferry.yaml:2: pool.max_concurrency: must be <= 100000, got 100001"},
		{"pool:\n  max_frame_size: 100\n", "ferry.yaml:2: pool.max_frame_size: must be >= 1KiB, got 100"},
		{"pool:\n  max_frame_size: 4GiB\n", "ferry.yaml:2: pool.max_frame_size: must be < 4GiB (frame lengths are 32-bit), got 4GiB"},
		{"pool:\n  max_frame_size: 1MiB\n", "ferry.yaml:2: server.max_body_size: 8MiB is larger than pool.max_frame_size (1MiB): such a body could never reach PHP"},
		{"server:\n  max_body_size: 100MiB\n", "ferry.yaml:2: server.max_body_size: 100MiB is larger than pool.max_frame_size (64MiB): such a body could never reach PHP"},
		{"pool:\n  php:\n    opcache: false\n    preload: app/preload.php\n", "ferry.yaml:4: pool.php.preload: needs pool.php.opcache: true"},
		{"pool:\n  php:\n    preload: \"a\\nb.php\"\n", "ferry.yaml:3: pool.php.preload: must be a file path on one line"},
		{"pool:\n  php:\n    jit: fast\n", `ferry.yaml:3: pool.php.jit: must be one of off, disable, on, tracing, function or a 4-digit CRTO number like 1255, got "fast"`},
		{"pool:\n  php:\n    opcache: false\n    jit: tracing\n", "ferry.yaml:4: pool.php.jit: needs pool.php.opcache: true"},
		{"pool:\n  php:\n    ini:\n      \"a=b\": 1\n", `ferry.yaml:4: pool.php.ini.a=b: invalid ini directive name "a=b"`},
		{"pool:\n  php:\n    ini:\n      x: \"1\\n2\"\n", "ferry.yaml:4: pool.php.ini.x: value must be on one line"},
		{"pool:\n  respawn_backoff:\n    min: 0s\n", "ferry.yaml:3: pool.respawn_backoff.min: must be > 0, got 0s"},
		{"pool:\n  respawn_backoff:\n    max: 50ms\n", "ferry.yaml:3: pool.respawn_backoff.max: must be >= pool.respawn_backoff.min (100ms), got 50ms"},
		{"pool:\n  respawn_backoff:\n    min: 10s\n", "ferry.yaml:3: pool.respawn_backoff.max: must be >= pool.respawn_backoff.min (10s), got 5s"},
		// admin, log
		{"admin:\n  socket: " + long + "\n", "ferry.yaml:2: admin.socket: path \"" + long + "\" is 108 bytes, unix socket paths are limited to 107"},
		{"admin:\n  socket: \"a\\0b\"\n", "ferry.yaml:2: admin.socket: must not contain a NUL byte"},
		{"log:\n  level: verbose\n", `ferry.yaml:2: log.level: must be one of debug, info, warn, error, got "verbose"`},
		{"log:\n  format: xml\n", `ferry.yaml:2: log.format: must be one of text, json, got "xml"`},
		{"log:\n  output: \"\"\n", "ferry.yaml:2: log.output: must be stderr, stdout or a file path"},
	}
	for _, c := range cases {
		wantOnlyError(t, c.src, c.want)
	}
}

func TestValidValuesAtTheLimits(t *testing.T) {
	dir := t.TempDir()
	src := `
server:
  address: ":0"
  read_header_timeout: 0s
  read_timeout: 0
  write_timeout: 0
  idle_timeout: 0
  max_body_size: 64MiB
  max_header_size: 1KiB
  static: {dir: ` + dir + `, prefix: /static/, forbid: [], cache_control: "public, max-age=60"}
pool:
  command: php8.2 w.php
  dir: ` + dir + `
  relay: tcp
  num_workers: 4096
  max_jobs: 0
  ttl: 0
  idle_ttl: 0
  max_memory: 0
  exec_ttl: 0
  queue_size: 1
  pipeline: 1024
  max_concurrency: 1
  max_frame_size: 4294967295
  php: {opcache: false, jit: off, ini: {display_errors: "stderr"}}
  respawn_backoff: {min: 1ns, max: 1ns}
admin:
  socket: ""
log: {level: error, format: json, output: stdout}
`
	c := mustParse(t, src)
	if c.Pool.MaxFrameSize != 1<<32-1 || c.Pool.Relay != "tcp" || c.Admin.Socket != "" {
		t.Fatalf("got %+v", c)
	}
	for _, addr := range []string{"[::1]:8080", "localhost:80", "0.0.0.0:65535"} {
		mustParse(t, "server:\n  address: \""+addr+"\"\n")
	}
	for _, jit := range []string{"on", "tracing", "function", "disable", "1255", "0000"} {
		mustParse(t, "pool:\n  php:\n    jit: \""+jit+"\"\n")
	}
}

func TestDecodeAndValidationErrorsReportedTogether(t *testing.T) {
	got := parseErrors(t, "server:\n  adress: x\npool:\n  max_jobs: -3\n  relay: nope\n  fibers: maybe\n")
	want := []string{
		"ferry.yaml:2: server.adress: unknown key (did you mean address?)",
		"ferry.yaml:4: pool.max_jobs: must be >= 0, got -3",
		`ferry.yaml:5: pool.relay: must be one of pipes, unix, tcp, stdio, got "nope"`,
		`ferry.yaml:6: pool.fibers: must be true or false, got "maybe"`,
	}
	deepEqual(t, got, want)
}

func TestErrorLineFallsBackToSection(t *testing.T) {
	// The bad value is the default; the only line the file gives is pool's.
	c := Default()
	c.lines = map[string]int{"pool": 7}
	c.source = "x.yaml"
	c.Pool.QueueSize = 0
	err := c.Validate()
	if err == nil || err.Error() != "x.yaml:7: pool.queue_size: must be >= 1, got 0" {
		t.Fatalf("got %v", err)
	}
}
