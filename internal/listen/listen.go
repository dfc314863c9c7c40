// Package listen is the front's side of its sockets, everything between a
// listening socket and the request handler: the listeners (a connection
// budget for every protocol, accept errors waited out), the connection the
// HTTP/1.1 server reads (lazy deadlines, lingering close, the header-block
// check fasthttp lacks), the sorting of h2c from HTTP/1 and the upgrade to
// h2c, the TLS certificate, the recovery from a panic on a connection, and
// the net/http shim that hands requests read by net/http (HTTPS, HTTP/2,
// h2c) to the same fasthttp handler as the plain front. What a request
// means, and what PHP makes of it, is package gateway's.
package listen

import (
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// ConnLimit is server.max_connections: one budget of open client
// connections for every listener and protocol of the front. A connection
// counts from its accept to its close, whoever serves it meanwhile: fasthttp,
// net/http, an h2c connection upgraded out of fasthttp, or one whose first
// bytes are still being read to tell HTTP/1 from HTTP/2.
type ConnLimit struct {
	max  int64 // 0: no limit
	open atomic.Int64
}

// NewConnLimit returns a budget of max connections (0: no limit).
func NewConnLimit(max int) *ConnLimit { return &ConnLimit{max: int64(max)} }

// Open is how many connections are open now.
func (l *ConnLimit) Open() int64 { return l.open.Load() }

func (l *ConnLimit) take() bool {
	if l.open.Add(1) > l.max && l.max > 0 {
		l.open.Add(-1)
		return false
	}
	return true
}

func (l *ConnLimit) give() { l.open.Add(-1) }

// Options say how Listen guards a listener.
type Options struct {
	Limit *ConnLimit // nil: no limit
	// Refuse is written to a connection over the limit before it is closed:
	// a 503 on a plain HTTP port (Refuse503); nothing on a TLS one.
	Refuse []byte
	Name   string // names the listener in log lines
	Log    *slog.Logger
	// Front is set when fasthttp reads these connections (or SplitH2C sorts
	// them first): it makes the FrontConn each TCP connection comes out as,
	// with the lazy deadlines, lingering close and header check of Conn.
	// NewConn makes a bare Conn; the gateway's adds its per-request state.
	Front func(*net.TCPConn) FrontConn
}

// Refuse503 is what a plain HTTP connection over server.max_connections gets.
var Refuse503 = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 58\r\nConnection: close\r\n\r\ntoo many open connections (server.max_connections); retry\n")

// Listen guards ln for the front: running out of descriptors or memory
// while accepting is waited out instead of ending the server (as net/http
// does, and fasthttp does not), connections beyond opt.Limit are refused at
// once, and TCP connections come out as opt.Front makes them (lazy
// deadlines, lingering close) and give their place back when closed.
func Listen(ln net.Listener, opt Options) net.Listener {
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	if opt.Name == "" {
		opt.Name = ln.Addr().String()
	}
	return &guarded{Listener: ln, opt: opt}
}

type guarded struct {
	net.Listener
	opt Options
}

// Accept backs off from 5 ms to 1 s while the error lasts, with one log line
// when accepting stops and one when it resumes: a flood of connections over
// the descriptor limit must not also flood the log.
func (g *guarded) Accept() (net.Conn, error) {
	var delay time.Duration
	var since time.Time
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			if errors.Is(err, syscall.ECONNABORTED) {
				continue // the client left before it was accepted
			}
			if !exhausted(err) {
				return nil, err
			}
			if delay == 0 {
				since, delay = time.Now(), 5*time.Millisecond
				g.opt.Log.Error("cannot accept connections: retrying until resources free up", "listener", g.opt.Name, "error", err)
			} else {
				delay = min(2*delay, time.Second)
			}
			time.Sleep(delay)
			continue
		}
		if delay != 0 {
			g.opt.Log.Warn("accepting connections again", "listener", g.opt.Name, "after", time.Since(since).Round(time.Millisecond))
			delay = 0
		}
		if l := g.opt.Limit; l != nil && !l.take() {
			g.refuse(c)
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok && g.opt.Front != nil {
			fc := g.opt.Front(tc)
			fc.Base().limit = g.opt.Limit
			return fc, nil
		}
		return &countedConn{Conn: c, limit: g.opt.Limit}, nil
	}
}

func (g *guarded) refuse(c net.Conn) {
	if len(g.opt.Refuse) > 0 {
		// A new connection's send buffer is empty: the write does not block,
		// and the deadline bounds it if it somehow would.
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write(g.opt.Refuse)
	}
	c.Close()
}

// exhausted reports an accept error that frees itself once connections close
// or memory is returned.
func exhausted(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// countedConn is a connection under a limit that net/http reads (TLS, the
// admin listeners), or a test's unix socket.
type countedConn struct {
	net.Conn
	limit  *ConnLimit
	closed atomic.Bool
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) && c.limit != nil {
		c.limit.give()
	}
	return c.Conn.Close()
}
