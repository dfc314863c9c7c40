package gateway

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
)

// clientGone is the context a job runs under: it ends only when the client
// has closed its connection, never because the server is shutting down (a
// deploy drains the requests it accepted). fasthttp does not read a connection
// while its handler runs, so the closed connection is found by peeking at the
// socket: on demand in Err (the pool asks it of jobs that wait, see
// pool/held.go), and every goneEvery while someone waits on Done. One watcher
// goroutine peeks at every such connection, so waiting on Done costs a map
// entry, not a goroutine and a timer.
type clientGone struct {
	parent   context.Context // a request net/http read: its own context says it all
	conn     net.Conn
	rc       syscall.RawConn
	mu       sync.Mutex
	done     chan struct{} // kept across the requests of a connection until it fires
	watched  bool
	released bool
	err      error
}

const goneEvery = 50 * time.Millisecond

// jobContext returns the connection's clientGone, reset for a new request:
// requests on one connection run one after another, so one per connection
// spares an allocation per request.
func jobContext(c net.Conn) *clientGone {
	if cc, ok := c.(*conn); ok {
		g := &cc.gone
		g.mu.Lock()
		if g.err != nil {
			g.done = nil // it may have been closed for the request before
		}
		g.released, g.err, g.watched = false, nil, false
		if g.rc == nil {
			g.conn = c
		}
		g.mu.Unlock()
		return g
	}
	if parent, ok := listen.StdContext(c); ok {
		return &clientGone{parent: parent}
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
	if g.parent != nil {
		return g.parent.Done()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done == nil {
		g.done = make(chan struct{})
	}
	if !g.watched && !g.released && g.err == nil && g.rawLocked() != nil {
		g.watched = true
		watcher.add(g)
	}
	return g.done
}

func (g *clientGone) Err() error {
	if g.parent != nil {
		return g.parent.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil && !g.released && g.rawLocked() != nil && peerClosed(g.rc) {
		g.err = context.Canceled
	}
	return g.err
}

// check is the watcher's look: it closes done once the client is gone.
func (g *clientGone) check() bool {
	if g.Err() == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil && !g.released {
		close(g.done)
		g.released = true // the connection is over; nothing reuses this context
	}
	return true
}

// release ends the job's watch; the connection then belongs to fasthttp again
// and is not touched.
func (g *clientGone) release() {
	g.mu.Lock()
	watched := g.watched
	g.released, g.watched = true, false
	g.mu.Unlock()
	if watched {
		watcher.remove(g)
	}
}

// goneWatcher peeks at the connections whose jobs wait, every goneEvery, on
// one goroutine that exists only while some do.
type goneWatcher struct {
	mu      sync.Mutex
	set     map[*clientGone]struct{}
	running bool
}

var watcher = &goneWatcher{set: map[*clientGone]struct{}{}}

func (w *goneWatcher) add(g *clientGone) {
	w.mu.Lock()
	w.set[g] = struct{}{}
	if !w.running {
		w.running = true
		go w.loop()
	}
	w.mu.Unlock()
}

func (w *goneWatcher) remove(g *clientGone) {
	w.mu.Lock()
	delete(w.set, g)
	w.mu.Unlock()
}

func (w *goneWatcher) loop() {
	t := time.NewTicker(goneEvery)
	defer t.Stop()
	var batch []*clientGone
	for range t.C {
		w.mu.Lock()
		if len(w.set) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		batch = batch[:0]
		for g := range w.set {
			batch = append(batch, g)
		}
		w.mu.Unlock()
		for _, g := range batch {
			if g.check() {
				w.remove(g)
			}
		}
	}
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
