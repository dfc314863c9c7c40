package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/gateway"
	"github.com/ferry-php/ferry/internal/pool"
)

// serve runs the server until SIGINT or SIGTERM, reloading the workers on
// SIGHUP. Stopping drains: the listener closes, every request already
// accepted (waiting for a worker included) is answered, then the workers stop.
func serve(args []string) error {
	cfg, path, err := loadConfigPath("serve", args)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log)
	if err != nil {
		return err
	}
	if extensionNote != "" {
		log.Info(extensionNote)
	}
	slog.SetDefault(log) // for what has no logger of its own: a panic recovered on a connection
	// Caught from the start: once "serving" is printed a deploy script may
	// send SIGHUP or SIGTERM at once, and their default action kills.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	gopt, err := gatewayOptions(cfg, log)
	if err != nil {
		return err
	}
	l, err := listenPlain(cfg)
	if err != nil {
		return err
	}
	ln := l // closed on the way out before the pool exists; see below for after
	fr, err := openFronts(cfg, l.front, log)
	if err != nil {
		ln.Close()
		return err
	}
	start := time.Now()
	procs := setProcs(cfg.Server.MaxProcs)
	o, err := newOps(cfg, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer o.close()
	o.metrics.GaugeFunc("ferry_http_connections_open", "Client connections open on the HTTP and HTTPS ports, counted against server.max_connections.",
		func() float64 { return float64(fr.limit.Open()) })
	popt := poolOptions(cfg, log)
	if l.direct != nil {
		popt.Direct = l.direct.File()
	}
	o.poolOptions(&popt)
	p, err := pool.New(popt)
	if err != nil {
		ln.Close()
		return err
	}
	gw := gateway.New(p, gopt)
	srv := httpServer(cfg.Server, gw, log)
	o.wrap(srv)
	rl := &reloader{path: path, leakWatch: leakWatchFlag, running: cfg, p: p, fr: fr, log: log}
	err = o.started(p, rl)
	var admin *http.Server
	if err == nil {
		admin, err = startAdmin(cfg.Admin.Socket, p, o, rl)
	}
	if err != nil {
		p.Shutdown(context.Background())
		ln.Close()
		return err
	}
	errc := make(chan error, 1)
	fr.serve(cfg, srv, gw, errc)
	if l.front != nil {
		go func() { errc <- srv.Serve(fr.plain) }()
	}
	log.Info("ferry serving", "url", "http://"+l.addr(), "mode", cfg.Server.Mode, "workers", p.Size(),
		"relay", cfg.Pool.Relay, "pipeline", popt.Pipeline, "startup", time.Since(start).Round(time.Millisecond),
		"admin", cfg.Admin.Socket, "go_procs", procs, "version", version)
	fmt.Fprintf(os.Stderr, "Ferry is serving on http://%s (Ctrl-C to stop)\n", l.addr())

	for {
		select {
		case err := <-errc:
			p.Shutdown(context.Background())
			l.closeDirect(context.Background(), log)
			return err
		case s := <-sig:
			if s == syscall.SIGHUP {
				go func() {
					if _, err := rl.reload(context.Background()); err != nil {
						log.Error("reload failed", "error", err)
					}
				}()
				continue
			}
			o.drain()
			budget := cfg.Server.WriteTimeout + cfg.Pool.DestroyTimeout
			log.Info("shutting down: draining accepted requests", "signal", s.String(), "budget", budget)
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			p.EndStreams() // an open event stream would hold the drain until its budget
			ferr := make(chan error, 1)
			go func() { ferr <- fr.shutdown(ctx) }()
			err := <-ferr
			if l.front != nil {
				err = errors.Join(srv.ShutdownWithContext(ctx), err)
			}
			if admin != nil {
				admin.Close()
			}
			// Direct mode: the workers got stop frames and drain their
			// connections; the socket closes once the last has exited.
			if perr := p.Shutdown(ctx); err == nil {
				err = perr
			}
			l.closeDirect(ctx, log)
			cancel()
			if err != nil {
				log.Error("stopped before every request was answered", "error", err)
				return fmt.Errorf("shutdown: %w", err)
			}
			log.Info("stopped")
			return nil
		}
	}
}
