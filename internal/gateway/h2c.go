package gateway

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// h2Preface opens every HTTP/2 connection (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// SplitH2C sorts the connections accepted on ln by their first bytes: those
// opening with the HTTP/2 preface come out of h2 (for StdServer), the others
// out of h1, wrapped like Listener's, for fasthttp. The first bytes are read
// on a goroutine per connection within timeout, so a client that sends
// nothing holds neither accept loop. Closing either listener closes ln.
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
			if isTemporary(err) {
				time.Sleep(20 * time.Millisecond) // out of descriptors: let some close
				continue
			}
			s.err = err
			s.close()
			return
		}
		go s.sort(c)
	}
}

func (s *splitter) sort(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(s.timeout))
	var buf [len(h2Preface)]byte
	n := 0
	for n < len(buf) && bytes.HasPrefix([]byte(h2Preface), buf[:n]) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 || err != io.EOF {
				c.Close()
				return
			}
			break
		}
	}
	c.SetReadDeadline(time.Time{})
	out, pre := s.h1, append([]byte(nil), buf[:n]...)
	var wrapped net.Conn
	if n == len(buf) && string(buf[:]) == h2Preface {
		out, wrapped = s.h2, &replayConn{Conn: c, pre: pre}
	} else if tc, ok := c.(*net.TCPConn); ok {
		wrapped = &conn{TCPConn: tc, remote: tc.RemoteAddr().String(), pre: pre}
	} else {
		wrapped = &replayConn{Conn: c, pre: pre}
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

func isTemporary(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ECONNABORTED)
}
