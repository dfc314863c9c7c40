package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ferry-php/ferry/internal/compress"
	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/gateway"
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/lograte"
	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/ferry-php/ferry/internal/static"
	"github.com/valyala/fasthttp"
)

// This file turns the configuration into the options of each part: the
// logger, the pool, the gateway and the fasthttp server.

func loadConfig(name string, args []string) (*config.Config, error) {
	cfg, _, err := loadConfigPath(name, args)
	return cfg, err
}

// loadConfigPath is loadConfig that also returns the file read ("" for the
// built-in defaults), which a reload reads again.
func loadConfigPath(name string, args []string) (*config.Config, string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	path := fs.String("c", "", "config file (default: ./ferry.yaml when present)")
	leakWatch := new(bool)
	if name == "serve" {
		leakWatch = fs.Bool("leak-watch", false, "report the state requests leave behind (pool.leak_watch: true)")
	}
	if err := fs.Parse(args); err != nil {
		return nil, "", err
	}
	var cfg *config.Config
	if *path == "" {
		*path = defaultConfigPath()
	}
	if *path == "" {
		cfg = config.Default()
	} else if c, err := loadConfigFile(name, *path); err != nil {
		return nil, "", err
	} else {
		cfg = c
	}
	if *leakWatch {
		cfg.Pool.LeakWatch = true
		leakWatchFlag = true
	}
	if name == "serve" {
		// Only serve starts workers; reload and workers talk to a running server.
		note, err := resolveExtension(cfg)
		if err != nil {
			return nil, "", err
		}
		extensionNote = note
	}
	return cfg, *path, nil
}

// extensionNote is resolveExtension's outcome, logged once the logger exists.
var extensionNote string

// leakWatchFlag is serve --leak-watch, which a reload applies over the file.
var leakWatchFlag bool

func newLogger(c config.LogConfig) (*slog.Logger, error) {
	var out io.Writer = os.Stderr
	switch c.Output {
	case "", "stderr":
	case "stdout":
		out = os.Stdout
	default:
		f, err := os.OpenFile(c.Output, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		out = f
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.Level)); err != nil {
		return nil, err
	}
	o := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(out, o)
	if c.Format == "json" {
		h = slog.NewJSONHandler(out, o)
	}
	// A database outage fails every request the same way: the log says so a
	// few times a second and counts the rest.
	return slog.New(lograte.New(h, time.Second)), nil
}

// poolOptions maps the config onto the pool, adding what the PHP SDK reads
// from its environment.
func poolOptions(c *config.Config, log *slog.Logger) pool.Options {
	p := c.Pool
	argv := c.WorkerArgv()
	if config.IsPHPBinary(argv[0]) {
		// PHP errors must reach the log (stderr), never the protocol stream.
		argv = append([]string{argv[0], "-d", "display_errors=stderr"}, argv[1:]...)
	}
	env := make([]string, 0, len(p.Env)+3)
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+p.Env[k])
	}
	env = append(env, "FERRY_MAX_PAYLOAD="+strconv.FormatUint(uint64(p.MaxFrameSize), 10))
	depth := p.Pipeline
	if p.Fibers {
		env = append(env, "FERRY_FIBERS=1", "FERRY_MAX_CONCURRENCY="+strconv.Itoa(p.MaxConcurrency))
		if !p.FiberReuse {
			env = append(env, "FERRY_FIBER_REUSE=0")
		}
		if p.FiberIO {
			env = append(env, "FERRY_FIBER_IO=1")
		}
		depth = p.MaxConcurrency
	}
	if c.Server.Debug {
		env = append(env, "FERRY_DEBUG=1")
	}
	if p.LeakWatch {
		env = append(env, "FERRY_LEAK_WATCH=1", "FERRY_LEAK_WATCH_EVERY="+strconv.Itoa(p.LeakWatchEvery),
			"FERRY_LEAK_WATCH_WARMUP="+strconv.Itoa(p.LeakWatchWarmup))
		if len(p.LeakWatchReplay) > 0 {
			paths, _ := json.Marshal(p.LeakWatchReplay) // a []string always encodes
			env = append(env, "FERRY_LEAK_WATCH_REPLAY="+string(paths))
		}
	}
	env = directEnv(c, env)
	return pool.Options{
		Protocol: workerProtocol(p.Protocol), Command: argv, Dir: p.Dir, Env: env, Relay: p.Relay,
		NumWorkers: p.NumWorkers, MaxWorkers: p.MaxWorkers, ScaleUpAfter: p.ScaleUpAfter, ScaleDownAfter: p.ScaleDownAfter,
		MaxJobs: p.MaxJobs, TTL: p.TTL, IdleTTL: p.IdleTTL,
		MaxMemory: uint64(p.MaxMemory), ExecTTL: p.ExecTTL, AllocateTimeout: p.AllocateTimeout,
		DestroyTimeout: p.DestroyTimeout, QueueSize: p.QueueSize, Pipeline: depth, Concurrent: p.Fibers,
		CancelGone: p.Fibers && p.FiberIO,
		Fork:       p.Forked(), ReforkAfter: p.ReforkAfter,
		MaxFrame: uint32(p.MaxFrameSize), BackoffMin: p.RespawnBackoff.Min, BackoffMax: p.RespawnBackoff.Max,
		Logger: log,
		// Beside the uploads and spooled request bodies: the same disk, sized
		// for request data, and uploads.dir is where an operator put it.
		SpoolDir: cmp.Or(c.Server.Uploads.Dir, os.TempDir()),
	}
}

func gatewayOptions(c *config.Config, log *slog.Logger) (gateway.Options, error) {
	s := c.Server
	proxies, err := gateway.ParseProxies(s.TrustedProxies)
	if err != nil {
		return gateway.Options{}, err
	}
	var files *static.Files
	if s.Static.Dir != "" {
		files = &static.Files{Dir: s.Static.Dir, Prefix: s.Static.Prefix, Forbid: s.Static.Forbid, CacheControl: s.Static.CacheControl}
	}
	var compression *compress.Options
	if cz := s.Compression; cz.Enabled && len(cz.Algorithms) > 0 {
		compression = &compress.Options{MinSize: int(cz.MinSize), Types: cz.Types, Algorithms: cz.Algorithms}
	}
	u := s.Uploads
	return gateway.Options{
		Debug: s.Debug, Static: files, Logger: log, Compression: compression,
		MaxHeaders: s.MaxHeaders, MaxBodySize: int64(s.MaxBodySize), BodyBufferSize: int64(s.BodyBufferSize),
		TrustedProxies: proxies, UnderscoresInHeaders: s.UnderscoreHeaders, Protocol: workerProtocol(c.Pool.Protocol),
		MaxInputVars: iniInt(c.Pool.PHP.Ini, "max_input_vars"), MaxInputNesting: iniInt(c.Pool.PHP.Ini, "max_input_nesting_level"),
		Uploads: multipart.Limits{
			Dir: u.Dir, MaxFiles: u.MaxFiles, MaxParts: u.MaxParts, MaxHeaderBytes: int(u.MaxPartHeaderSize),
			MaxDiskBytes: int64(s.MaxBodySize), Forbid: u.Forbid,
		},
	}, nil
}

// iniInt is a pool.php.ini number the front needs too; 0 (PHP's default)
// when it is not set or not a plain number.
func iniInt(ini map[string]string, name string) int {
	n, err := strconv.Atoi(strings.TrimSpace(ini[name]))
	if err != nil {
		return 0
	}
	return n
}

// httpServer sets the front's limits and timeouts as docs/config.md describes
// them.
func httpServer(s config.ServerConfig, h *gateway.Handler, log *slog.Logger) *fasthttp.Server {
	return h.Server(serverLimits(s, log))
}

func serverLimits(s config.ServerConfig, log *slog.Logger) listen.Limits {
	return listen.Limits{
		ReadHeaderTimeout: s.ReadHeaderTimeout, ReadTimeout: s.ReadTimeout,
		WriteTimeout: s.WriteTimeout, IdleTimeout: s.IdleTimeout,
		MaxHeaderSize: int(s.MaxHeaderSize), MaxConnections: s.MaxConnections,
		Logger: fastLogger{log},
	}
}

// setProcs sizes the Go scheduler. The PHP workers run on the same CPUs, and
// an idle Go P spins looking for work before it sleeps: on the 2-core
// reference VM, 1 P instead of 2 cut the server's CPU per hello request by
// about 10% and raised throughput by 13-15% under the bench harness's load
// (wrk -t1 -c50), with no loss under wrk -t2. So by default the front gets
// half the CPUs. An explicit server.max_procs wins, then GOMAXPROCS.
func setProcs(configured int) int {
	switch {
	case configured > 0:
		runtime.GOMAXPROCS(configured)
	case os.Getenv("GOMAXPROCS") == "":
		runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
	}
	return runtime.GOMAXPROCS(0)
}

// fastLogger routes fasthttp's own messages (bad requests, timeouts, clients
// that vanish mid-request) to slog. They name the client's address, so each
// text is unique: under one fixed message the rate limiter sees them as the
// repeats they are, and a flood of broken connections costs a few lines a
// second.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.log.Warn("client connection error", "detail", fmt.Sprintf(format, args...))
}
