package listen

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
)

// H2C switches HTTP/1.1 requests that ask for it to HTTP/2 (Upgrade: h2c
// with HTTP2-Settings, RFC 7540 §3.2, as curl --http2 sends it on http://):
// the request gets a 101 and is answered as stream 1 of an HTTP/2
// connection served like srv's, the h2c server's. A request with a body, or
// an incomplete upgrade, is served over HTTP/1.1 as if it had not asked: the
// server may ignore Upgrade. The connections it upgrades leave fasthttp, so
// H2C tracks them itself, for Shutdown.
type H2C struct {
	h2 *http2.Server
	// hooks only carries x/net's graceful-shutdown hook: the connections
	// ServeConn serves are known to it, not to srv.
	hooks  *http.Server
	srv    *http.Server
	accept func(*fasthttp.RequestCtx) bool

	mu      sync.Mutex
	conns   map[*ownedConn]struct{}
	closing bool
	idle    *sync.Cond // signalled as the last connection ends
}

// NewH2C upgrades to srv's HTTP/2; accept runs the HTTP/1.1 request checks
// (Handler.Acceptable), which a request must pass before it may switch.
func NewH2C(srv *http.Server, accept func(*fasthttp.RequestCtx) bool) *H2C {
	u := &H2C{
		h2:     &http2.Server{MaxConcurrentStreams: uint32(srv.HTTP2.MaxConcurrentStreams), IdleTimeout: srv.IdleTimeout},
		hooks:  &http.Server{},
		srv:    srv,
		accept: accept,
		conns:  map[*ownedConn]struct{}{},
	}
	u.idle = sync.NewCond(&u.mu)
	http2.ConfigureServer(u.hooks, u.h2)
	return u
}

// Wrap answers upgrade requests and hands every other request to next.
func (u *H2C) Wrap(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		settings, ok := h2cUpgrade(ctx)
		if !ok || !u.accept(ctx) || u.shuttingDown() {
			next(ctx) // next answers a request that fails the checks with their 4xx
			return
		}
		req, err := upgradeRequest(ctx)
		if err != nil {
			next(ctx)
			return
		}
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) { u.serve(c, req, settings) })
	}
}

// serve runs on fasthttp's hijack goroutine, and must not return while
// anything may still use c: fasthttp then recycles c and its read buffer.
func (u *H2C) serve(c net.Conn, req *http.Request, settings []byte) {
	oc := ownConn(c)
	if fc, ok := oc.sock.(FrontConn); ok {
		fc.Base().h2 = true // frames from here: no HTTP/1 header block to check
	}
	defer oc.release()
	defer RecoverConn(oc, "serving an upgraded h2c connection")
	if !u.track(oc) {
		oc.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
		return
	}
	defer u.untrack(oc)
	oc.SetDeadline(time.Time{}) // HTTP/2 keeps its own timeouts from here
	if _, err := oc.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")); err != nil {
		return
	}
	u.h2.ServeConn(oc, &http2.ServeConnOpts{Handler: u.srv.Handler, BaseConfig: u.srv, UpgradeRequest: req, Settings: settings})
}

func (u *H2C) shuttingDown() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.closing
}

func (u *H2C) track(oc *ownedConn) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closing {
		return false
	}
	u.conns[oc] = struct{}{}
	return true
}

func (u *H2C) untrack(oc *ownedConn) {
	u.mu.Lock()
	delete(u.conns, oc)
	if len(u.conns) == 0 {
		u.idle.Broadcast()
	}
	u.mu.Unlock()
}

// Shutdown drains the upgraded connections as net/http drains its own: no
// new upgrade, a GOAWAY on each connection, which ends once its streams are
// answered; those still open when ctx ends are closed.
func (u *H2C) Shutdown(ctx context.Context) error {
	u.mu.Lock()
	u.closing = true
	u.mu.Unlock()
	u.hooks.Shutdown(ctx) // runs x/net's hook: GOAWAY to every connection it serves
	stop := context.AfterFunc(ctx, func() {
		u.mu.Lock()
		for oc := range u.conns {
			oc.Close()
		}
		u.idle.Broadcast()
		u.mu.Unlock()
	})
	defer stop()
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.conns) > 0 && ctx.Err() == nil {
		u.idle.Wait()
	}
	return ctx.Err()
}

// ownedConn is a hijacked connection while HTTP/2 serves it. x/net/http2
// writes frames from goroutines of its own (writeFrameAsync) and reads on
// another, which may still be in a call when ServeConn returns; fasthttp
// nils and pools the hijacked conn, and pools its read buffer, as soon as
// the hijack handler returns. So every call is counted, and release returns
// only after closing the socket (which ends any blocked call) and seeing the
// last call leave. Later calls fail without touching the hijacked conn.
type ownedConn struct {
	c      net.Conn // fasthttp's hijacked conn: reads give its buffered bytes first
	sock   net.Conn // the socket under it
	local  net.Addr
	remote net.Addr

	mu     sync.Mutex
	busy   int
	closed bool
	left   *sync.Cond
}

func ownConn(c net.Conn) *ownedConn {
	oc := &ownedConn{c: c, sock: c, local: c.LocalAddr(), remote: c.RemoteAddr()}
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		oc.sock = u.UnsafeConn()
	}
	oc.left = sync.NewCond(&oc.mu)
	return oc
}

func (oc *ownedConn) enter() bool {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.closed {
		return false
	}
	oc.busy++
	return true
}

func (oc *ownedConn) leave() {
	oc.mu.Lock()
	if oc.busy--; oc.busy == 0 {
		oc.left.Broadcast()
	}
	oc.mu.Unlock()
}

func (oc *ownedConn) Read(b []byte) (int, error) {
	if !oc.enter() {
		return 0, net.ErrClosed
	}
	defer oc.leave()
	return oc.c.Read(b)
}

func (oc *ownedConn) Write(b []byte) (int, error) {
	if !oc.enter() {
		return 0, net.ErrClosed
	}
	defer oc.leave()
	return oc.c.Write(b)
}

func (oc *ownedConn) deadline(set func(time.Time) error, t time.Time) error {
	if !oc.enter() {
		return net.ErrClosed
	}
	defer oc.leave()
	return set(t)
}

func (oc *ownedConn) SetDeadline(t time.Time) error { return oc.deadline(oc.sock.SetDeadline, t) }
func (oc *ownedConn) SetReadDeadline(t time.Time) error {
	return oc.deadline(oc.sock.SetReadDeadline, t)
}
func (oc *ownedConn) SetWriteDeadline(t time.Time) error {
	return oc.deadline(oc.sock.SetWriteDeadline, t)
}
func (oc *ownedConn) LocalAddr() net.Addr  { return oc.local }
func (oc *ownedConn) RemoteAddr() net.Addr { return oc.remote }

// Close closes the socket: calls blocked in it return, new ones fail.
func (oc *ownedConn) Close() error {
	oc.mu.Lock()
	if oc.closed {
		oc.mu.Unlock()
		return nil
	}
	oc.closed = true
	oc.mu.Unlock()
	return oc.sock.Close()
}

// release closes and waits until no call is left inside the hijacked conn.
func (oc *ownedConn) release() {
	oc.Close()
	oc.mu.Lock()
	for oc.busy > 0 {
		oc.left.Wait()
	}
	oc.mu.Unlock()
}

// h2cUpgrade reports whether the request asks for h2c and has nothing in
// its body (the body would have to be read whole first), with the settings
// it carries.
func h2cUpgrade(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	h := &ctx.Request.Header
	if !h.IsHTTP11() || !hasToken(h.Peek("Upgrade"), "h2c") || !hasToken(h.Peek("Connection"), "upgrade") {
		return nil, false
	}
	raw := h.Peek("Http2-Settings")
	if raw == nil || h.ContentLength() > 0 || h.ContentLength() == -1 {
		return nil, false
	}
	settings, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimRight(raw, "=")))
	if err != nil || len(settings)%6 != 0 {
		return nil, false
	}
	return settings, true
}

func hasToken(v []byte, token string) bool {
	for _, t := range bytes.Split(v, []byte(",")) {
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}

// upgradeRequest is the upgrading request as net/http would have read it.
func upgradeRequest(ctx *fasthttp.RequestCtx) (*http.Request, error) {
	req, err := http.NewRequest(string(ctx.Method()), "http://"+string(ctx.Host())+string(ctx.RequestURI()), nil)
	if err != nil {
		return nil, err
	}
	req.RequestURI = string(ctx.RequestURI())
	req.RemoteAddr = ctx.RemoteAddr().String()
	ctx.Request.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case "Host", "Connection", "Upgrade", "Http2-Settings", "Keep-Alive", "Transfer-Encoding", "Te":
			return
		}
		req.Header.Add(string(k), string(v))
	})
	// The Host field as sent, not fasthttp's reading of the target: the
	// HTTP/2 side checks it and settles the host as for any request.
	req.Host = string(ctx.Request.Header.Host())
	return req, nil
}
