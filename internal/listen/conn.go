package listen

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Conn keeps the deadlines fasthttp asks for without re-arming a runtime timer
// each time: fasthttp moves the read deadline three times and the write
// deadline once per request, and on a keep-alive connection each move only
// pushes the deadline later. A later deadline is just recorded; the earlier one
// already armed fires first, and Read or Write then arms the recorded one and
// carries on. So no deadline ever fires early, and a busy connection pays for
// one timer move per timeout period instead of four per request. Deadlines are
// unix nanoseconds, 0 for none.
//
// A Conn is made by Options.Front, alone (NewConn) or as the first field of
// a type that keeps state of its own per connection: that type is what the
// handler finds in RequestCtx.Conn, with no further indirection.
type Conn struct {
	*net.TCPConn
	readWant, readSet   atomic.Int64
	writeWant, writeSet atomic.Int64
	linger              atomic.Bool // set when the server answered before reading the whole request
	head                headCheck
	pre                 []byte     // first bytes SplitH2C read to sort the connection
	h2                  bool       // HTTP/2 (sorted by SplitH2C, or upgraded): frames, no header block to check
	limit               *ConnLimit // given back once, when the socket is closed
	closed              atomic.Bool
}

// FrontConn is a connection a front listener hands out: a Conn, or a type
// embedding one.
type FrontConn interface {
	net.Conn
	Base() *Conn
}

// NewConn is Options.Front for a listener that needs nothing beyond Conn.
func NewConn(tc *net.TCPConn) FrontConn { return &Conn{TCPConn: tc} }

// Base is the Conn itself, for a type embedding it.
func (c *Conn) Base() *Conn { return c }

// Linger makes Close drain what the client still sends before closing: the
// server answered before reading the whole request (see Close).
func (c *Conn) Linger() { c.linger.Store(true) }

// HeadBlocks counts the header blocks read first after a response went out
// (or at the connection's start): equal to the requests served when no
// request arrived before the previous response had gone out.
func (c *Conn) HeadBlocks() uint64 { return c.head.blocks }

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (c *Conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

func (c *Conn) SetReadDeadline(t time.Time) error {
	return setLazy(t, &c.readWant, &c.readSet, c.TCPConn.SetReadDeadline)
}

func (c *Conn) SetWriteDeadline(t time.Time) error {
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

func (c *Conn) Read(b []byte) (int, error) {
	if c.head.bad {
		// fasthttp waits for a colon that will never come; the header block
		// is complete, so the request is malformed now, not at the timeout.
		c.head.bad = false
		return 0, ErrMalformedHeader
	}
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		if !c.h2 {
			c.head.scan(b[:n])
		}
		return n, nil
	}
	for {
		n, err := c.TCPConn.Read(b)
		if n > 0 && !c.h2 {
			c.head.scan(b[:n])
		}
		if n > 0 || err == nil || !rearm(err, &c.readWant, &c.readSet, c.TCPConn.SetReadDeadline) {
			return n, err
		}
	}
}

func (c *Conn) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 1")) { // a 1xx (100 Continue, 103) comes before the response, not after it
		c.head.arm()
	}
	written := 0
	for {
		n, err := c.TCPConn.Write(b[written:])
		written += n
		if err == nil || !rearm(err, &c.writeWant, &c.writeSet, c.TCPConn.SetWriteDeadline) {
			return written, err
		}
	}
}

// ReadFrom is where a static file leaves by sendfile(2). It must honour the
// lazy write deadline like Write: a deadline armed for an earlier response
// on the connection may fire mid-file and only needs re-arming. A reader the
// kernel cannot send from goes through Write.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if !sendfileable(r) {
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	var total int64
	for {
		n, err := c.TCPConn.ReadFrom(r) // the file offset and the limit move with what was sent
		total += n
		if err == nil || !rearm(err, &c.writeWant, &c.writeSet, c.TCPConn.SetWriteDeadline) {
			return total, err
		}
	}
}

func sendfileable(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	_, ok := r.(*os.File)
	return ok
}

// Close behaves like nginx's lingering close: when the server gives up on a
// request early (a body over max_body_size, headers over max_header_size) the
// client is usually still sending, and a plain close turns the unread bytes
// into a TCP reset that destroys the 413/431 before the client reads it.
// Closing the write side first and draining what is still arriving, for a
// bounded time and amount, lets the response through.
//
// Only such a connection lingers: an idle keep-alive connection closed at
// shutdown must go at once, or it holds the drain for its whole idle timeout.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return c.TCPConn.Close() // a second close: its error, nothing given back twice
	}
	if !c.linger.Load() {
		return c.closeNow()
	}
	if err := c.TCPConn.CloseWrite(); err != nil {
		return c.closeNow()
	}
	go func() {
		c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
		io.CopyN(io.Discard, c.TCPConn, lingerBytes)
		c.closeNow()
	}()
	return nil
}

// closeNow closes the socket and gives its place back under max_connections:
// a lingering connection still holds a descriptor until then.
func (c *Conn) closeNow() error {
	err := c.TCPConn.Close()
	if c.limit != nil {
		c.limit.give()
	}
	return err
}

const (
	lingerTime  = 2 * time.Second
	lingerBytes = 16 << 20
)
