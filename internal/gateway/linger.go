package gateway

import (
	"io"
	"net"
	"time"
)

// LingerListener makes Close behave like nginx's lingering close: when the
// server gives up on a request early (a body over max_body_size, headers over
// max_header_size) the client is usually still sending, and a plain close turns
// the unread bytes into a TCP reset that destroys the 413/431 before the client
// reads it. Closing the write side first and draining what is still arriving,
// for a bounded time and amount, lets the response through.
func LingerListener(ln net.Listener) net.Listener { return lingerListener{ln} }

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return lingerConn{tc}, nil
	}
	return c, nil
}

type lingerConn struct{ *net.TCPConn }

const (
	lingerTime  = 2 * time.Second
	lingerBytes = 16 << 20
)

func (c lingerConn) Close() error {
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
