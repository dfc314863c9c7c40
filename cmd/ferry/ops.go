package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/gateway"
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/observe"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/ferry-php/ferry/internal/watch"
	"github.com/valyala/fasthttp"
)

// ops is what an operator watches and steers a running server with:
// metrics, health and readiness, request ids, the access log and systemd.
type ops struct {
	cfg     *config.Config
	log     *slog.Logger
	metrics *observe.Metrics
	health  *observe.Health
	alog    *observe.AccessLog
	fifo    *observe.DirectFIFO // direct mode: the workers' lines come through it
	tracing *observe.Tracing
	notify  *observe.Notifier
	tcp     []*http.Server
	watch   *watch.Watcher
	usr1    chan os.Signal
}

// newOps runs before the pool starts: the pool reports job timings to the
// metrics, and the workers must not inherit $NOTIFY_SOCKET.
func newOps(cfg *config.Config, log *slog.Logger) (*ops, error) {
	o := &ops{cfg: cfg, log: log, metrics: observe.NewMetrics(), notify: observe.NewNotifier()}
	o.metrics.CounterFunc("ferry_front_panics_total", "Panics recovered while serving a connection: each closed that connection only.",
		func() float64 { return float64(listen.Panics()) })
	// Caught even with no log file to reopen: SIGUSR1's default action
	// kills, and a logrotate rule may send it anyway.
	o.usr1 = make(chan os.Signal, 1)
	signal.Notify(o.usr1, syscall.SIGUSR1)
	if al := cfg.Server.AccessLog; al.Enabled {
		l, err := observe.OpenAccessLog(al.Format, al.Path)
		if err != nil {
			return nil, err
		}
		o.alog = l
		if cfg.Server.Direct() {
			f, err := l.OpenDirectFIFO(os.TempDir())
			if err != nil {
				l.Close()
				return nil, err
			}
			o.fifo = f
			directAccessFIFO = f.Path
		}
	}
	if tr := cfg.Server.Tracing; tr.Enabled {
		t, err := observe.NewTracing(tr.Endpoint, tr.ServiceName, tr.SampleRatio, log)
		if err != nil {
			return nil, err
		}
		o.tracing = t
	}
	go o.reopenLoop()
	return o, nil
}

func (o *ops) poolOptions(popt *pool.Options) { popt.Observer = o.metrics }

// wrap puts request ids, request metrics and the access log around the front.
func (o *ops) wrap(srv *fasthttp.Server) {
	srv.Handler = observe.NewFront(srv.Handler, observe.FrontOptions{
		Metrics: o.metrics, RequestIDs: o.cfg.Server.RequestID, AccessLog: o.alog, Tracing: o.tracing,
		Timing: gateway.JobTiming,
	})
}

// started runs once the workers have booted and the listener is open: the
// pool's metrics appear, /ready says yes, the TCP listeners open and systemd
// hears READY=1.
func (o *ops) started(p *pool.Pool, rl *reloader) error {
	o.metrics.Attach(p)
	o.health = observe.NewHealth(p.Accepting)
	o.health.Booted()
	a := o.cfg.Admin
	listeners := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if listeners[addr] == nil {
			listeners[addr] = http.NewServeMux()
		}
		return listeners[addr]
	}
	if a.MetricsAddress != "" {
		mux(a.MetricsAddress).Handle("GET /metrics", o.metrics.Handler())
	}
	if a.HealthAddress != "" {
		o.health.Register(mux(a.HealthAddress))
	}
	for addr, m := range listeners {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			o.close()
			return fmt.Errorf("admin listener %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: adminReadTimeout, ReadTimeout: adminReadTimeout,
			WriteTimeout: adminWriteTimeout, IdleTimeout: adminIdleTimeout}
		o.tcp = append(o.tcp, srv)
		go srv.Serve(listen.Listen(ln, listen.Options{
			Limit: listen.NewConnLimit(adminMaxConnections), Refuse: listen.Refuse503, Name: "admin " + addr, Log: o.log}))
		o.log.Info("admin listening", "address", ln.Addr().String())
	}
	if globs := o.cfg.Server.Watch; len(globs) > 0 {
		w, err := watch.Start(globs, func() {
			if _, err := rl.reload(context.Background()); err != nil {
				o.log.Error("reload after a file change failed: the old workers go on", "error", err)
			}
		}, o.log)
		if err != nil {
			o.close()
			return fmt.Errorf("server.watch: %w", err)
		}
		o.watch = w
	}
	if err := o.notify.Notify("READY=1\nSTATUS=serving"); err != nil {
		o.log.Warn("sd_notify READY failed", "error", err)
	}
	return nil
}

// The admin TCP listeners answer scrapers and load balancers: short requests
// from a few peers. Their own small limits keep idle or slow connections
// there from taking the descriptors the app's port needs.
const (
	adminReadTimeout    = 5 * time.Second
	adminWriteTimeout   = 10 * time.Second
	adminIdleTimeout    = 5 * time.Second
	adminMaxConnections = 64
)

// register adds the admin socket's share: /metrics, /health and /ready.
func (o *ops) register(mux *http.ServeMux) {
	mux.Handle("GET /metrics", o.metrics.Handler())
	o.health.Register(mux)
}

// drain runs first on SIGTERM: /ready turns 503 and systemd hears STOPPING=1,
// then the listener stays open drain_delay longer, so that load balancers
// polling /ready stop sending before connections are refused.
func (o *ops) drain() {
	o.health.Drain()
	if err := o.notify.Notify("STOPPING=1"); err != nil {
		o.log.Warn("sd_notify STOPPING failed", "error", err)
	}
	if d := o.cfg.Server.DrainDelay; d > 0 {
		o.log.Info("not ready any more: waiting drain_delay before closing the listener", "drain_delay", d)
		time.Sleep(d)
	}
}

func (o *ops) reopenLoop() {
	for range o.usr1 {
		if o.alog == nil {
			continue
		}
		if err := o.alog.Reopen(); err != nil {
			o.log.Error("access log not reopened", "error", err)
		} else {
			o.log.Info("access log reopened", "path", o.cfg.Server.AccessLog.Path)
		}
	}
}

// close stops the TCP listeners and writes the access log out; last, once
// every request is answered.
func (o *ops) close() {
	var errs []error
	if o.watch != nil {
		errs = append(errs, o.watch.Close())
		o.watch = nil
	}
	for _, s := range o.tcp {
		errs = append(errs, s.Close())
	}
	o.tcp = nil
	if o.fifo != nil {
		errs = append(errs, o.fifo.Close()) // the workers' last lines, before the log closes
		o.fifo = nil
	}
	if o.alog != nil {
		errs = append(errs, o.alog.Close())
	}
	if o.tracing != nil {
		// The spans of the last requests; a collector that is gone costs 5 s at most.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, o.tracing.Shutdown(ctx))
		cancel()
		o.tracing = nil
	}
	if err := errors.Join(errs...); err != nil {
		o.log.Warn("closing", "error", err)
	}
}
