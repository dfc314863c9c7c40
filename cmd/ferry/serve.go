package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/valyala/fasthttp"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/gateway"
	"github.com/ferry-php/ferry/internal/pool"
)

func loadConfig(name string, args []string) (*config.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	path := fs.String("c", "", "config file (default: ./ferry.yaml when present)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *path == "" {
		if _, err := os.Stat("ferry.yaml"); err != nil {
			return config.Default(), nil
		}
		*path = "ferry.yaml"
	}
	return config.Load(*path)
}

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
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(out, o)), nil
	}
	return slog.New(slog.NewTextHandler(out, o)), nil
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
		depth = p.MaxConcurrency
	}
	if c.Server.Debug {
		env = append(env, "FERRY_DEBUG=1")
	}
	return pool.Options{
		Command: argv, Dir: p.Dir, Env: env, Relay: p.Relay,
		NumWorkers: p.NumWorkers, MaxJobs: p.MaxJobs, TTL: p.TTL, IdleTTL: p.IdleTTL,
		MaxMemory: uint64(p.MaxMemory), ExecTTL: p.ExecTTL, AllocateTimeout: p.AllocateTimeout,
		DestroyTimeout: p.DestroyTimeout, QueueSize: p.QueueSize, Pipeline: depth, Concurrent: p.Fibers,
		MaxFrame: uint32(p.MaxFrameSize), BackoffMin: p.RespawnBackoff.Min, BackoffMax: p.RespawnBackoff.Max,
		Logger: log,
	}
}

func serve(args []string) error {
	cfg, err := loadConfig("serve", args)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Address)
	if err != nil {
		return err
	}
	start := time.Now()
	procs := setProcs(cfg.Server.MaxProcs)
	popt := poolOptions(cfg, log)
	p, err := pool.New(popt)
	if err != nil {
		ln.Close()
		return err
	}
	s := cfg.Server
	var static *gateway.Static
	if s.Static.Dir != "" {
		static = &gateway.Static{Dir: s.Static.Dir, Prefix: s.Static.Prefix, Forbid: s.Static.Forbid, CacheControl: s.Static.CacheControl}
	}
	h := gateway.New(p, gateway.Options{Debug: s.Debug, AccessLog: s.AccessLog, Static: static, Logger: log})
	srv := &fasthttp.Server{
		Handler:            h.Serve,
		Name:               "ferry",
		ReadTimeout:        s.ReadTimeout,
		WriteTimeout:       s.WriteTimeout,
		IdleTimeout:        s.IdleTimeout,
		MaxRequestBodySize: int(s.MaxBodySize),
		ReadBufferSize:     int(s.MaxHeaderSize), // bounds the header block: 431 beyond
		Logger:             fastLogger{log},
		ErrorHandler:       gateway.ProtocolError,
		CloseOnShutdown:    true,
	}
	if s.ReadHeaderTimeout > 0 && (s.ReadTimeout == 0 || s.ReadHeaderTimeout < s.ReadTimeout) {
		// The header must arrive within read_header_timeout (slowloris); once it
		// has, the body gets the rest of read_timeout.
		srv.ReadTimeout = s.ReadHeaderTimeout
		srv.HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{ReadTimeout: s.ReadTimeout}
		}
	}

	admin, err := startAdmin(cfg.Admin.Socket, p, log)
	if err != nil {
		p.Shutdown(context.Background())
		ln.Close()
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(gateway.Listener(ln)) }()
	log.Info("ferry serving", "url", "http://"+ln.Addr().String(), "workers", p.Size(),
		"relay", cfg.Pool.Relay, "pipeline", popt.Pipeline, "startup", time.Since(start).Round(time.Millisecond),
		"admin", cfg.Admin.Socket, "go_procs", procs, "version", version)
	fmt.Fprintf(os.Stderr, "Ferry is serving on http://%s (Ctrl-C to stop)\n", ln.Addr())

	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	for {
		select {
		case err := <-errc:
			p.Shutdown(context.Background())
			return err
		case s := <-sig:
			if s == syscall.SIGHUP {
				go func() {
					if err := p.Reload(context.Background()); err != nil {
						log.Error("reload failed", "error", err)
					}
				}()
				continue
			}
			log.Info("shutting down: draining in-flight requests", "signal", s.String())
			ctx, cancel := context.WithTimeout(context.Background(), cfg.Server.WriteTimeout+cfg.Pool.DestroyTimeout)
			err := srv.ShutdownWithContext(ctx)
			if admin != nil {
				admin.Close()
			}
			if perr := p.Shutdown(ctx); err == nil {
				err = perr
			}
			cancel()
			log.Info("stopped")
			return err
		}
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

// fastLogger routes fasthttp's own messages (bad requests, timeouts) to slog.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) { l.log.Warn(fmt.Sprintf(format, args...)) }
