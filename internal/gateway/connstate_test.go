package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/pool"
)

// A request without a body keeps its header deadline through its job: a job
// longer than read_header_timeout must not cost the connection, and the next
// request on it is served, and still held to read_header_timeout.
func TestLongJobKeepsTheConnection(t *testing.T) {
	exec := &scripted{answer: func(ctx context.Context, jobCtx, body []byte) (pool.Result, error) {
		if strings.Contains(string(jobCtx), `"/slow"`) {
			time.Sleep(500 * time.Millisecond)
		}
		return pool.Result{Context: []byte(`{"status":200}`), Body: []byte("ok")}, nil
	}}
	addr := front(t, Options{}, listen.Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}, exec)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, path := range []string{"/slow", "/next"} {
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if got := readStatus(t, r); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("%s: %q", path, got)
		}
		for line, _ := r.ReadString('\n'); line != "\r\n"; line, _ = r.ReadString('\n') {
		}
		io.ReadFull(r, make([]byte, 2))
	}
	io.WriteString(c, "GET /late HTTP/1.1\r\n") // and the rest never comes
	start := time.Now()
	if got := readStatus(t, r); !strings.HasPrefix(got, "HTTP/1.1 408") || time.Since(start) > 3*time.Second {
		t.Fatalf("a header left unfinished: %q after %v, want 408 at read_header_timeout", got, time.Since(start))
	}
}
