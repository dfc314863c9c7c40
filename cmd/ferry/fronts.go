package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/gateway"
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
	certs  *gateway.Certs
	log    *slog.Logger
}

// openFronts listens on every configured address before the workers start,
// so a taken port or a bad certificate fails at once.
func openFronts(cfg *config.Config, ln net.Listener, log *slog.Logger) (*fronts, error) {
	f := &fronts{plain: gateway.Listener(ln), log: log}
	s := &cfg.Server
	if s.TLS.Address != "" {
		certs, err := gateway.LoadCerts(s.TLS.Cert, s.TLS.Key)
		if err != nil {
			return nil, err
		}
		tln, err := net.Listen("tcp", s.TLS.Address)
		if err != nil {
			return nil, err
		}
		f.certs = certs
		f.stdLns = append(f.stdLns, tln)
		f.tlsURL = "https://" + tln.Addr().String()
	}
	if s.HTTP2.H2C {
		h1, h2 := gateway.SplitH2C(ln, s.ReadHeaderTimeout)
		f.plain = h1
		f.stdLns = append(f.stdLns, h2)
	}
	return f, nil
}

// serve starts the net/http servers; an error from one ends ferry serve.
// The net/http stacks call the plain server's handler as it is now, with
// whatever wraps the gateway (request ids, metrics, the access log).
func (f *fronts) serve(cfg *config.Config, plain *fasthttp.Server, errc chan<- error) {
	s := &cfg.Server
	limits := serverLimits(*s, f.log)
	next := plain.Handler
	if s.TLS.Redirect {
		plain.Handler = gateway.RedirectTLS(f.stdLns[0].Addr().String())
	}
	for i, ln := range f.stdLns {
		isTLS := f.certs != nil && i == 0
		srv := gateway.StdServer(next, limits, s.HTTP2.MaxConcurrentStreams, isTLS, f.log)
		f.std = append(f.std, srv)
		if !isTLS && !s.TLS.Redirect {
			// h2c: an HTTP/1.1 request may also ask to switch (Upgrade: h2c).
			plain.Handler = gateway.UpgradeH2C(next, srv)
		}
		ln = gateway.LimitListener(ln, s.MaxConnections)
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
// connections get a GOAWAY).
func (f *fronts) shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range f.std {
		errs = append(errs, srv.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
