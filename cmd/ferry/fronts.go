package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/gateway"
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// fronts are the listeners beside the plain HTTP/1.1 one (fasthttp): HTTPS
// with HTTP/2, and h2c on the plain address. Each sends its requests through
// the same gateway.Handler.
type fronts struct {
	plain  net.Listener // what fasthttp serves
	tlsURL string
	std    []*http.Server
	stdLns []net.Listener
	certs  *listen.Certs
	h2c    *listen.H2C // upgrades from HTTP/1.1; nil without h2c
	limit  *listen.ConnLimit
	log    *slog.Logger
}

// openFronts listens on every configured address before the workers start,
// so a taken port or a bad certificate fails at once.
func openFronts(cfg *config.Config, ln net.Listener, log *slog.Logger) (*fronts, error) {
	s := &cfg.Server
	limit := listen.NewConnLimit(connectionBudget(cfg, log))
	f := &fronts{log: log, limit: limit}
	if ln != nil { // nil in server.mode: direct, where the workers serve it
		f.plain = listen.Listen(ln, listen.Options{Limit: limit, Refuse: listen.Refuse503, Name: "http", Log: log, Front: gateway.NewConn})
	}
	if s.TLS.Address != "" {
		certs, err := listen.LoadCerts(s.TLS.Cert, s.TLS.Key)
		if err != nil {
			return nil, err
		}
		tln, err := net.Listen("tcp", s.TLS.Address)
		if err != nil {
			return nil, err
		}
		f.certs = certs
		f.stdLns = append(f.stdLns, listen.Listen(tln, listen.Options{Limit: limit, Name: "https", Log: log}))
		f.tlsURL = "https://" + tln.Addr().String()
	}
	if s.HTTP2.H2C {
		h1, h2 := listen.SplitH2C(f.plain, s.ReadHeaderTimeout)
		f.plain = h1
		f.stdLns = append(f.stdLns, h2)
	}
	return f, nil
}

// serve starts the net/http servers and sets the plain server's handler;
// it runs before the plain server serves. An error from one ends ferry serve.
// The net/http stacks call the plain server's handler as it is now, with
// whatever wraps the gateway (request ids, metrics, the access log).
func (f *fronts) serve(cfg *config.Config, plain *fasthttp.Server, gw *gateway.Handler, errc chan<- error) {
	s := &cfg.Server
	limits := serverLimits(*s, f.log)
	next := plain.Handler
	// What a request on the plain port gets, whichever protocol it speaks:
	// with tls.redirect, prior-knowledge h2c is redirected like HTTP/1.1.
	onPlain := next
	if s.TLS.Redirect {
		onPlain = gateway.RedirectTLS(f.stdLns[0].Addr().String())
	}
	for i, ln := range f.stdLns {
		isTLS := f.certs != nil && i == 0
		h := next
		if !isTLS {
			h = onPlain
		}
		srv := listen.StdServer(h, limits, s.HTTP2.MaxConcurrentStreams, isTLS, f.log)
		f.std = append(f.std, srv)
		if !isTLS && !s.TLS.Redirect {
			// h2c: an HTTP/1.1 request may also ask to switch (Upgrade: h2c).
			f.h2c = listen.NewH2C(srv, gw.Acceptable)
			onPlain = f.h2c.Wrap(onPlain)
		}
		go func() {
			var err error
			if isTLS {
				srv.TLSConfig = f.certs.TLSConfig()
				err = srv.ServeTLS(ln, "", "")
			} else {
				err = srv.Serve(ln)
			}
			if !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				select {
				case errc <- err:
				default: // ferry serve is ending already
				}
			}
		}()
	}
	plain.Handler = listen.Recover(onPlain, f.log)
	if f.tlsURL != "" {
		fmt.Fprintf(os.Stderr, "Ferry is serving HTTPS on %s\n", f.tlsURL)
	}
}

// reload rereads the TLS certificate (SIGHUP).
func (f *fronts) reload() {
	if f.certs == nil {
		return
	}
	if err := f.certs.Reload(); err != nil {
		f.log.Error("TLS certificate not reloaded: the previous one stays in use", "error", err)
		return
	}
	f.log.Info("TLS certificate reloaded")
}

// shutdown stops accepting and waits for the requests in flight (HTTP/2
// connections, upgraded ones included, get a GOAWAY).
func (f *fronts) shutdown(ctx context.Context) error {
	errs := make([]error, len(f.std)+1)
	var wg sync.WaitGroup
	for i, srv := range f.std {
		wg.Go(func() { errs[i] = srv.Shutdown(ctx) })
	}
	if f.h2c != nil {
		wg.Go(func() { errs[len(f.std)] = f.h2c.Shutdown(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
