package listen

import (
	"bytes"
	"io"
	"net"
	"sync"
	"time"
)

// h2Preface opens every HTTP/2 connection (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// SplitH2C sorts the connections accepted on ln (a Listen listener, which
// has counted them under max_connections already) by their first bytes: those
// opening with the HTTP/2 preface come out of h2 (for StdServer), the others
// out of h1 for fasthttp. The first bytes are read on a goroutine per
// connection within timeout, so a client that sends nothing holds neither
// accept loop. Closing either listener closes ln.
func SplitH2C(ln net.Listener, timeout time.Duration) (h1, h2 net.Listener) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	s := &splitter{ln: ln, h1: make(chan net.Conn), h2: make(chan net.Conn), done: make(chan struct{}), timeout: timeout}
	go s.accept()
	return &splitListener{s, s.h1}, &splitListener{s, s.h2}
}

type splitter struct {
	ln      net.Listener
	h1, h2  chan net.Conn
	done    chan struct{}
	once    sync.Once
	err     error
	timeout time.Duration
}

func (s *splitter) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.err = err
			s.close()
			return
		}
		go s.sort(c)
	}
}

func (s *splitter) sort(c net.Conn) {
	defer RecoverConn(c, "sorting a connection")
	// The socket itself is read: Conn.Read would take these bytes for the
	// start of a header block, and they are given back to it whole after.
	raw := c
	fc, front := c.(FrontConn)
	if front {
		raw = fc.Base().TCPConn
	}
	raw.SetReadDeadline(time.Now().Add(s.timeout))
	var buf [len(h2Preface)]byte
	n := 0
	for n < len(buf) && bytes.HasPrefix([]byte(h2Preface), buf[:n]) {
		m, err := raw.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 || err != io.EOF {
				c.Close()
				return
			}
			break
		}
	}
	raw.SetReadDeadline(time.Time{})
	out, pre := s.h1, append([]byte(nil), buf[:n]...)
	isH2 := n == len(buf) && string(buf[:]) == h2Preface
	if isH2 {
		out = s.h2
	}
	var wrapped net.Conn = &replayConn{Conn: c, pre: pre}
	if front {
		b := fc.Base()
		b.pre, b.h2, wrapped = pre, isH2, fc
	}
	select {
	case out <- wrapped:
	case <-s.done:
		c.Close()
	}
}

func (s *splitter) close() {
	s.once.Do(func() {
		close(s.done)
		s.ln.Close()
	})
}

type splitListener struct {
	s  *splitter
	ch chan net.Conn
}

func (l *splitListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.s.done:
		if l.s.err != nil {
			return nil, l.s.err
		}
		return nil, net.ErrClosed
	}
}

func (l *splitListener) Close() error   { l.s.close(); return nil }
func (l *splitListener) Addr() net.Addr { return l.s.ln.Addr() }

// replayConn gives back the bytes read to sort the connection before the rest.
type replayConn struct {
	net.Conn
	pre []byte
}

func (c *replayConn) Read(b []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
