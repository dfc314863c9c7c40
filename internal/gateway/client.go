package gateway

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// clientGone is the context a job runs under: it ends only when the client
// has closed its connection, never because the server is shutting down (a
// deploy drains the requests it accepted). fasthttp does not read a connection
// while its handler runs, so the closed connection is found by peeking at the
// socket: on demand in Err, and every goneEvery while someone waits on Done
// (a job queued for a worker). A job that gets a worker at once never starts
// the poller.
type clientGone struct {
	conn     net.Conn
	rc       syscall.RawConn
	mu       sync.Mutex
	done     chan struct{}
	stop     chan struct{}
	released bool
	err      error
}

const goneEvery = 50 * time.Millisecond

// jobContext returns the connection's clientGone, reset for a new request:
// requests on one connection run one after another, so one per connection
// spares an allocation per request.
func jobContext(c net.Conn) *clientGone {
	if cc, ok := c.(*conn); ok {
		cc.gone = clientGone{conn: c}
		return &cc.gone
	}
	return &clientGone{conn: c}
}

// rawLocked finds the socket the first time it is needed.
func (g *clientGone) rawLocked() syscall.RawConn {
	if g.rc == nil && g.conn != nil {
		if cc, ok := g.conn.(*conn); ok {
			g.rc, _ = cc.TCPConn.SyscallConn()
		} else if sc, ok := g.conn.(syscall.Conn); ok {
			g.rc, _ = sc.SyscallConn()
		}
		g.conn = nil
	}
	return g.rc
}

func (g *clientGone) Deadline() (time.Time, bool) { return time.Time{}, false }
func (g *clientGone) Value(any) any               { return nil }

func (g *clientGone) Done() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done == nil {
		g.done = make(chan struct{})
		g.stop = make(chan struct{})
		if g.rawLocked() != nil && !g.released {
			go g.poll()
		}
	}
	return g.done
}

func (g *clientGone) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil && !g.released && g.rawLocked() != nil && peerClosed(g.rc) {
		g.err = context.Canceled
	}
	return g.err
}

func (g *clientGone) poll() {
	t := time.NewTicker(goneEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			if g.Err() != nil {
				close(g.done)
				return
			}
		}
	}
}

// release stops the poller once the job is over; the connection then
// belongs to fasthttp again and is not touched.
func (g *clientGone) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.released && g.stop != nil {
		close(g.stop)
	}
	g.released = true
}

// peerClosed peeks one byte without blocking: 0 bytes read means the client
// sent FIN, a reset means it is gone. Bytes waiting (a pipelined request) say
// nothing either way, so the client counts as present.
func peerClosed(rc syscall.RawConn) bool {
	closed := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true // ECONNRESET and the like
		}
	})
	return closed
}

var _ context.Context = (*clientGone)(nil)
