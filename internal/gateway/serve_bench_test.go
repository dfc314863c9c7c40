package gateway

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
)

// BenchmarkServeHello runs the whole HTTP/1.1 path of the front (the guarded
// listener, the lazy-deadline conn, fasthttp, Serve, the answer) for a GET
// PHP answers with a short body, on one keep-alive loopback connection. The
// worker is scripted, so what it measures, allocations included, is the
// front's own cost per request.
func BenchmarkServeHello(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := New(&scripted{}, Options{}).Server(listen.Limits{MaxHeaderSize: 64 << 10, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	go srv.Serve(listen.Listen(ln, listen.Options{Front: NewConn}))
	defer srv.Shutdown()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /hello?name=x HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	r := bufio.NewReader(c)
	// One answer's length, read once: every answer has the same head and body.
	c.Write(req)
	var n int
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		n += len(line)
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
	}
	n += len("from php")
	if _, err := r.Discard(len("from php")); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, n)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Fatal(err)
		}
	}
}
