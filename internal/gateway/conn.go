package gateway

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Listener wraps the HTTP listener's connections with two behaviours fasthttp
// lacks: a lingering close and lazily moved deadlines (see conn).
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &conn{TCPConn: tc, remote: tc.RemoteAddr().String()}, nil
	}
	return c, nil
}

// conn keeps the deadlines fasthttp asks for without re-arming a runtime timer
// each time: fasthttp moves the read deadline three times and the write
// deadline once per request, and on a keep-alive connection each move only
// pushes the deadline later. A later deadline is just recorded; the earlier one
// already armed fires first, and Read or Write then arms the recorded one and
// carries on. So no deadline ever fires early, and a busy connection pays for
// one timer move per timeout period instead of four per request. Deadlines are
// unix nanoseconds, 0 for none.
type conn struct {
	*net.TCPConn
	remote              string // RemoteAddr().String(), for every request's context
	readWant, readSet   atomic.Int64
	writeWant, writeSet atomic.Int64
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

func (c *conn) SetReadDeadline(t time.Time) error {
	return setLazy(t, &c.readWant, &c.readSet, c.TCPConn.SetReadDeadline)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	return setLazy(t, &c.writeWant, &c.writeSet, c.TCPConn.SetWriteDeadline)
}

func setLazy(t time.Time, want, set *atomic.Int64, arm func(time.Time) error) error {
	w := unixNano(t)
	want.Store(w)
	if s := set.Load(); s != 0 && (w == 0 || w >= s) {
		return nil // the armed deadline comes first; rearm() catches up then
	}
	set.Store(w)
	return arm(t)
}

// rearm arms the wanted deadline after the armed one fired, and says whether
// the operation should be retried (the wanted one has not passed).
func rearm(err error, want, set *atomic.Int64, arm func(time.Time) error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	w := want.Load()
	if w == set.Load() || (w != 0 && time.Now().UnixNano() >= w) {
		return false // the deadline the caller asked for has passed
	}
	set.Store(w)
	if w == 0 {
		return arm(time.Time{}) == nil
	}
	return arm(time.Unix(0, w)) == nil
}

func (c *conn) Read(b []byte) (int, error) {
	for {
		n, err := c.TCPConn.Read(b)
		if n > 0 || err == nil || !rearm(err, &c.readWant, &c.readSet, c.TCPConn.SetReadDeadline) {
			return n, err
		}
	}
}

func (c *conn) Write(b []byte) (int, error) {
	written := 0
	for {
		n, err := c.TCPConn.Write(b[written:])
		written += n
		if err == nil || !rearm(err, &c.writeWant, &c.writeSet, c.TCPConn.SetWriteDeadline) {
			return written, err
		}
	}
}

// Close behaves like nginx's lingering close: when the server gives up on a
// request early (a body over max_body_size, headers over max_header_size) the
// client is usually still sending, and a plain close turns the unread bytes
// into a TCP reset that destroys the 413/431 before the client reads it.
// Closing the write side first and draining what is still arriving, for a
// bounded time and amount, lets the response through.
func (c *conn) Close() error {
	if err := c.TCPConn.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	go func() {
		c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
		io.CopyN(io.Discard, c.TCPConn, lingerBytes)
		c.TCPConn.Close()
	}()
	return nil
}

const (
	lingerTime  = 2 * time.Second
	lingerBytes = 16 << 20
)
