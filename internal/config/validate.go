package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits that keep a typo from turning into a huge allocation or a fork bomb.
const (
	maxWorkers        = 4096
	maxPipeline       = 1024
	maxConcurrency    = 100_000
	maxQueueSize      = 1 << 20
	maxLeakWatchCount = 1_000_000
	// Each replayed path costs a worker one extra request per check.
	maxLeakWatchReplay = 32
	maxFrameSizeLimit  = Size(1<<32 - 1) // Goridge v3 payload length is a uint32
	minFrameSize       = 1 * KiB
	// sun_path is 108 bytes on Linux including the terminating NUL.
	maxSocketPath = 107
)

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
	relays     = []string{RelayPipes, RelayUnix, RelayTCP, RelayStdio}
	jitModes   = []string{"off", "disable", "on", "tracing", "function"}
	jitCRTO    = regexp.MustCompile(`^[0-9]{4}$`)
)

type checker struct {
	c    *Config
	errs Errors
}

// at reports a problem at the first of paths that the file set, so an
// error caused by two keys points at the one the user wrote. With none set,
// it falls back to the nearest section the file mentions.
func (k *checker) at(paths []string, format string, args ...any) {
	line := 0
	for _, p := range paths {
		if l, ok := k.c.lines[p]; ok {
			line = l
			break
		}
	}
	if line == 0 {
		for p := paths[0]; p != "" && line == 0; {
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				break
			}
			p = p[:i]
			line = k.c.lines[p]
		}
	}
	k.errs.add(&Error{Source: k.c.source, Line: line, Path: paths[0], Msg: fmt.Sprintf(format, args...)})
}

func (k *checker) err(path, format string, args ...any) { k.at([]string{path}, format, args...) }

func (k *checker) nonNegDur(path string, d time.Duration) {
	if d < 0 {
		k.err(path, "must be >= 0, got %s", d)
	}
}

func (k *checker) posDur(path string, d time.Duration) {
	if d <= 0 {
		k.err(path, "must be > 0, got %s", d)
	}
}

func (k *checker) oneOf(path, v string, set []string) {
	if !slices.Contains(set, v) {
		k.err(path, "must be one of %s, got %q", strings.Join(set, ", "), v)
	}
}

func (k *checker) intRange(path string, v, lo, hi int) {
	if v < lo {
		k.err(path, "must be >= %d, got %d", lo, v)
	} else if v > hi {
		k.err(path, "must be <= %d, got %d", hi, v)
	}
}

// dir checks that a configured directory exists now, so a typo fails at
// start-up instead of on the first request.
func (k *checker) dir(path, dir string) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		k.err(path, "directory %q: %v", dir, unwrapPathErr(err))
	case !st.IsDir():
		k.err(path, "%q is not a directory", dir)
	}
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Validate checks every value and cross-key constraint and returns all
// problems found (as Errors), each located by key path and, for a config
// that came from a file, by line. It checks that static.dir and pool.dir
// exist, so results depend on the current directory for relative paths.
func (c *Config) Validate() error {
	k := &checker{c: c}
	k.server(&c.Server)
	k.pool(&c.Pool, &c.Server)
	k.direct(c)
	k.admin(&c.Admin)
	k.observe(&c.Server, &c.Admin)
	k.log(&c.Log)
	if len(k.errs) == 0 {
		return nil
	}
	k.errs.sortByLine()
	return k.errs
}

func (k *checker) server(s *ServerConfig) {
	k.address("server.address", s.Address)
	k.nonNegDur("server.read_header_timeout", s.ReadHeaderTimeout)
	k.nonNegDur("server.read_timeout", s.ReadTimeout)
	k.nonNegDur("server.write_timeout", s.WriteTimeout)
	k.nonNegDur("server.idle_timeout", s.IdleTimeout)
	if s.MaxBodySize <= 0 {
		k.err("server.max_body_size", "must be > 0, got %s", s.MaxBodySize)
	}
	k.intRange("server.max_procs", s.MaxProcs, 0, 4096)
	if s.MaxHeaderSize < KiB {
		k.err("server.max_header_size", "must be >= 1KiB, got %s", s.MaxHeaderSize)
	}
	k.intRange("server.max_headers", s.MaxHeaders, 1, 100000)
	k.intRange("server.max_connections", s.MaxConnections, 0, 10_000_000)
	if s.BodyBufferSize < 0 {
		k.err("server.body_buffer_size", "must be >= 0, got %s", s.BodyBufferSize)
	}
	for i, c := range s.TrustedProxies {
		if _, err := netip.ParsePrefix(c); err != nil {
			if _, err2 := netip.ParseAddr(c); err2 != nil {
				k.err(fmt.Sprintf("server.trusted_proxies[%d]", i), "must be a CIDR (10.0.0.0/8) or an address, got %q", c)
			}
		}
	}
	u := &s.Uploads
	if u.Dir != "" {
		k.dir("server.uploads.dir", u.Dir)
	}
	k.intRange("server.uploads.max_files", u.MaxFiles, 0, 100000)
	k.intRange("server.uploads.max_parts", u.MaxParts, 1, 1000000)
	if u.MaxPartHeaderSize < 256 {
		k.err("server.uploads.max_part_header_size", "must be >= 256B, got %s", u.MaxPartHeaderSize)
	}
	for i, f := range u.Forbid {
		if f == "" {
			k.err(fmt.Sprintf("server.uploads.forbid[%d]", i), "must not be empty")
		}
	}
	st := &s.Static
	if st.Dir != "" {
		k.dir("server.static.dir", st.Dir)
	}
	if !strings.HasPrefix(st.Prefix, "/") {
		k.err("server.static.prefix", "must start with \"/\", got %q", st.Prefix)
	}
	for i, f := range st.Forbid {
		if f == "" {
			k.err(fmt.Sprintf("server.static.forbid[%d]", i), "must not be empty")
		}
	}
	if strings.ContainsAny(st.CacheControl, "\r\n") {
		k.err("server.static.cache_control", "must not contain line breaks")
	}
	k.tls(s)
	cz := &s.Compression
	for i, a := range cz.Algorithms {
		if a != "br" && a != "zstd" && a != "gzip" {
			k.err(fmt.Sprintf("server.compression.algorithms[%d]", i), "must be br, zstd or gzip, got %q", a)
		}
	}
	for i, t := range cz.Types {
		if !strings.Contains(t, "/") {
			k.err(fmt.Sprintf("server.compression.types[%d]", i), "must be a media type such as text/html or text/*, got %q", t)
		}
	}
}

func (k *checker) address(path, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		k.err(path, "must be host:port (e.g. \"127.0.0.1:8080\" or \":8080\"), got %q", addr)
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		k.err(path, "port must be a number from 0 to 65535, got %q", port)
	}
	if strings.ContainsAny(host, " /") {
		k.err(path, "invalid host %q", host)
	}
}

func (k *checker) pool(p *PoolConfig, s *ServerConfig) {
	if len(p.Command) == 0 {
		k.err("pool.command", "must not be empty (e.g. [\"php\", \"worker.php\"])")
	}
	for i, w := range p.Command {
		if w == "" {
			k.err(fmt.Sprintf("pool.command[%d]", i), "must not be empty")
		}
	}
	if p.Dir != "" {
		k.dir("pool.dir", p.Dir)
	}
	for _, name := range sortedKeys(p.Env) {
		key := "pool.env." + printableKey(name)
		if !validEnvName(name) {
			k.err(key, "invalid environment variable name %q (letters, digits and _, not starting with a digit)", name)
		}
		if strings.ContainsRune(p.Env[name], 0) {
			k.err(key, "value must not contain a NUL byte")
		}
	}
	k.oneOf("pool.relay", p.Relay, relays)
	k.protocol(p)
	k.oneOf("pool.boot", p.Boot, []string{BootExec, BootFork})
	if p.ReforkAfter < 0 {
		k.err("pool.refork_after", "must be >= 0, got %d", p.ReforkAfter)
	}
	k.intRange("pool.num_workers", p.NumWorkers, 0, maxWorkers)
	k.elastic(p)
	if p.MaxJobs < 0 {
		k.err("pool.max_jobs", "must be >= 0, got %d", p.MaxJobs)
	}
	k.nonNegDur("pool.ttl", p.TTL)
	k.nonNegDur("pool.idle_ttl", p.IdleTTL)
	if p.MaxMemory < 0 {
		k.err("pool.max_memory", "must be >= 0, got %s", p.MaxMemory)
	}
	k.nonNegDur("pool.exec_ttl", p.ExecTTL)
	k.posDur("pool.allocate_timeout", p.AllocateTimeout)
	k.posDur("pool.destroy_timeout", p.DestroyTimeout)
	k.intRange("pool.queue_size", p.QueueSize, 1, maxQueueSize)
	k.intRange("pool.pipeline", p.Pipeline, 1, maxPipeline)
	k.intRange("pool.max_concurrency", p.MaxConcurrency, 1, maxConcurrency)
	k.intRange("pool.leak_watch_every", p.LeakWatchEvery, 1, maxLeakWatchCount)
	k.intRange("pool.leak_watch_warmup", p.LeakWatchWarmup, 1, maxLeakWatchCount)
	if len(p.LeakWatchReplay) > maxLeakWatchReplay {
		k.err("pool.leak_watch_replay", "at most %d paths, got %d", maxLeakWatchReplay, len(p.LeakWatchReplay))
	}
	for i, path := range p.LeakWatchReplay {
		// A path as the worker sees it (the request target without its query), matched exactly.
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t\r\n") {
			k.err(fmt.Sprintf("pool.leak_watch_replay[%d]", i), "must be a path starting with / (no query, no spaces), got %q", path)
		}
	}
	switch {
	case p.MaxFrameSize < minFrameSize:
		k.err("pool.max_frame_size", "must be >= 1KiB, got %s", p.MaxFrameSize)
	case p.MaxFrameSize > maxFrameSizeLimit:
		k.err("pool.max_frame_size", "must be < 4GiB (frame lengths are 32-bit), got %s", p.MaxFrameSize)
	case s.MaxBodySize > p.MaxFrameSize:
		k.at([]string{"server.max_body_size", "pool.max_frame_size"},
			"%s is larger than pool.max_frame_size (%s): such a body could never reach PHP", s.MaxBodySize, p.MaxFrameSize)
	}
	k.php(&p.PHP)
	b := p.RespawnBackoff
	k.posDur("pool.respawn_backoff.min", b.Min)
	if b.Max < b.Min {
		k.at([]string{"pool.respawn_backoff.max", "pool.respawn_backoff.min"},
			"must be >= pool.respawn_backoff.min (%s), got %s", b.Min, b.Max)
	}
}

func (k *checker) php(p *PHPConfig) {
	if p.Preload != "" && !p.Opcache {
		k.err("pool.php.preload", "needs pool.php.opcache: true")
	}
	if p.JIT != "" {
		if !slices.Contains(jitModes, p.JIT) && !jitCRTO.MatchString(p.JIT) {
			k.err("pool.php.jit", "must be one of %s or a 4-digit CRTO number like 1255, got %q", strings.Join(jitModes, ", "), p.JIT)
		} else if !p.Opcache && jitEnabled(p.JIT) {
			k.err("pool.php.jit", "needs pool.php.opcache: true")
		}
	}
	if p.Preload != "" {
		// PHP resolves the preload path itself; only reject what it never accepts.
		if strings.ContainsAny(p.Preload, "\x00\r\n") {
			k.err("pool.php.preload", "must be a file path on one line")
		}
	}
	if err := CheckExtension(p.Extension); err != nil {
		k.err("pool.php.extension", "%s", err)
	}
	for _, name := range sortedKeys(p.Ini) {
		path := "pool.php.ini." + name
		if name == "" || strings.ContainsAny(name, "= \t\r\n\x00") {
			k.err(path, "invalid ini directive name %q", name)
		}
		if strings.ContainsAny(p.Ini[name], "\r\n\x00") {
			k.err(path, "value must be on one line")
		}
	}
}

func (k *checker) admin(a *AdminConfig) {
	if len(a.Socket) > maxSocketPath {
		k.err("admin.socket", "path %q is %d bytes, unix socket paths are limited to %d", a.Socket, len(a.Socket), maxSocketPath)
	}
	if strings.ContainsRune(a.Socket, 0) {
		k.err("admin.socket", "must not contain a NUL byte")
	}
}

func (k *checker) log(l *LogConfig) {
	k.oneOf("log.level", l.Level, logLevels)
	k.oneOf("log.format", l.Format, logFormats)
	if l.Output == "" {
		k.err("log.output", "must be stderr, stdout or a file path")
	}
}

func (k *checker) tls(s *ServerConfig) {
	t := &s.TLS
	if t.Address == "" {
		if t.Cert != "" || t.Key != "" || t.Redirect {
			k.err("server.tls.address", "must be set when server.tls.cert, key or redirect is (e.g. \":8443\")")
		}
	} else {
		k.address("server.tls.address", t.Address)
		if t.Address == s.Address && !strings.HasSuffix(t.Address, ":0") {
			k.err("server.tls.address", "must differ from server.address, got %q for both", t.Address)
		}
		for _, f := range [][2]string{{"server.tls.cert", t.Cert}, {"server.tls.key", t.Key}} {
			if f[1] == "" {
				k.err(f[0], "must name a PEM file when server.tls.address is set")
			} else if _, err := os.Stat(f[1]); err != nil {
				k.err(f[0], "file %q: %v", f[1], unwrapPathErr(err))
			}
		}
	}
	k.intRange("server.http2.max_concurrent_streams", s.HTTP2.MaxConcurrentStreams, 1, 10000)
}

// elastic checks the elastic pool's keys: num_workers is its floor, so
// max_workers below it would make a pool that cannot be.
func (k *checker) elastic(p *PoolConfig) {
	k.intRange("pool.max_workers", p.MaxWorkers, 0, maxWorkers)
	k.posDur("pool.scale_up_after", p.ScaleUpAfter)
	k.posDur("pool.scale_down_after", p.ScaleDownAfter)
	if p.MaxWorkers <= 0 || p.MaxWorkers > maxWorkers {
		return
	}
	floor := fmt.Sprintf("num_workers (%d)", p.NumWorkers)
	n := p.NumWorkers
	if n == 0 {
		n = runtime.NumCPU()
		floor = fmt.Sprintf("num_workers (0: one per CPU, %d here)", n)
	}
	if p.MaxWorkers < n {
		k.at([]string{"pool.max_workers", "pool.num_workers"},
			"max_workers %d is below %s, the pool's floor: max_workers is how far the pool may grow (0: it stays at num_workers)", p.MaxWorkers, floor)
	}
}

// printableKey is a map key as an error may name it: quoted when it holds a
// character that is not printable (a newline would split the error's line from
// its source position).
func printableKey(name string) string {
	for _, r := range name {
		if !strconv.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}
