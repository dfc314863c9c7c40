package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// scripted answers every job with what answer returns; it stands in for a
// worker so that the front's own parsing and checks are tested alone (the
// end-to-end suite in cmd/ferry runs the same cases through real PHP).
type scripted struct {
	answer func(ctx context.Context, jobCtx, body []byte) (pool.Result, error)
	jobs   atomic.Int64
	mu     sync.Mutex
	last   []byte
}

func (s *scripted) Exec(ctx context.Context, jobCtx, body []byte) (pool.Result, error) {
	s.jobs.Add(1)
	s.mu.Lock()
	s.last = append(s.last[:0], jobCtx...)
	s.mu.Unlock()
	if s.answer == nil {
		return pool.Result{Context: []byte(`{"status":200}`), Body: []byte("from php")}, nil
	}
	return s.answer(ctx, jobCtx, body)
}

// front serves h on a free loopback port and returns its address.
func front(t *testing.T, opt Options, lim listen.Limits, exec Executor) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if lim.MaxHeaderSize == 0 {
		lim.MaxHeaderSize = 64 << 10
	}
	if lim.ReadTimeout == 0 {
		lim.ReadTimeout = 10 * time.Second
	}
	srv := New(exec, opt).Server(lim)
	go srv.Serve(listen.Listen(ln, listen.Options{Limit: listen.NewConnLimit(lim.MaxConnections), Refuse: listen.Refuse503, Front: NewConn}))
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// roundTrip sends raw bytes and reads until the server closes or 5 s pass;
// it returns everything the server sent.
func roundTrip(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

func statusOf(resp string) string {
	line, _, _ := strings.Cut(resp, "\r\n")
	return line
}

func TestFrontRejectsMalformedRequests(t *testing.T) {
	exec := &scripted{}
	addr := front(t, Options{}, listen.Limits{}, exec)
	cases := []struct{ name, raw, status string }{
		{"smuggling CL+TE", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"smuggling TE+CL", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 400"},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "HTTP/1.1 400"},
		{"NUL in target", "GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"HTTP/9.9", "GET / HTTP/9.9\r\nHost: a\r\n\r\n", "HTTP/1.1 505"},
		{"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", "HTTP/1.1 405"},
		{"header line without colon", "GET / HTTP/1.1\r\nHost: a\r\nBadHeaderNoColon\r\n\r\n", "HTTP/1.1 400"},
		// RFC 9112 §5.2 lets a server refuse obs-fold; fasthttp's unfolding leaves bytes of
		// the head behind, which the connection's next request was parsed after
		{"obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: one\r\n        two\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"obs-fold, bare LF", "GET / HTTP/1.1\nHost: a\nX-A: one\n\ttwo\n\n", "HTTP/1.1 400"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := exec.jobs.Load()
			start := time.Now()
			resp := roundTrip(t, addr, c.raw)
			if !strings.HasPrefix(statusOf(resp), c.status) {
				t.Fatalf("got %q, want %s", statusOf(resp), c.status)
			}
			if n := strings.Count(resp, "HTTP/1.1 "); n != 1 {
				t.Fatalf("%d responses on the connection, want 1 (it must close): %q", n, resp)
			}
			if exec.jobs.Load() != before {
				t.Fatal("the request reached PHP")
			}
			// roundTrip reads until the server closes: the connection must
			// close at once, not at the read timeout.
			if d := time.Since(start); d > 4*time.Second {
				t.Fatalf("answered after %s: the server waited for the timeout", d)
			}
		})
	}
	// HTTP/1.0 may omit Host.
	if resp := roundTrip(t, addr, "GET / HTTP/1.0\r\n\r\n"); !strings.HasPrefix(statusOf(resp), "HTTP/1.1 200") {
		t.Fatalf("HTTP/1.0 without Host: %q", statusOf(resp))
	}
}

func TestFrontMaxHeaders(t *testing.T) {
	exec := &scripted{}
	addr := front(t, Options{MaxHeaders: 100}, listen.Limits{}, exec)
	var b strings.Builder
	b.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	for i := 0; i < 7000; i++ {
		b.WriteString("X:\r\n")
	}
	b.WriteString("\r\n")
	if got := statusOf(roundTrip(t, addr, b.String())); !strings.HasPrefix(got, "HTTP/1.1 431") {
		t.Fatalf("7000 headers: %q, want 431", got)
	}
	b.Reset()
	b.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	for i := 0; i < 99; i++ {
		fmt.Fprintf(&b, "X-%d: v\r\n", i%7)
	}
	b.WriteString("Connection: close\r\n\r\n")
	if got := statusOf(roundTrip(t, addr, b.String())); !strings.HasPrefix(got, "HTTP/1.1 431") {
		t.Fatalf("101 header lines: %q, want 431", got)
	}
}

func TestFrontRefusesHeaderInjectionFromWorker(t *testing.T) {
	answers := map[string]string{
		"/crlf-value":  `{"status":200,"headers":{"X-A":["ok\r\nSet-Cookie: evil=1"]}}`,
		"/crlf-name":   `{"status":200,"headers":{"X-A\r\nSet-Cookie: evil":["1"]}}`,
		"/nul":         `{"status":200,"headers":{"X-A":["a\u0000b"]}}`,
		"/lf-escaped":  `{"status":200,"headers":{"X-A":["a\nb"]}}`,
		"/space-name":  `{"status":200,"headers":{"X A":["1"]}}`,
		"/status-103":  `{"status":103}`,
		"/status-99":   `{"status":99}`,
		"/status-600":  `{"status":600}`,
		"/bad-reason":  `{"status":200,"reason":"OK\r\nX: y"}`,
		"/raw-crlf":    `{"status":200,"raw_headers":{"X-A":["YQ0KYg=="]}}`,
		"/ok":          `{"status":201,"headers":{"X-A":["fine"]}}`,
		"/raw-latin1":  `{"status":200,"raw_headers":{"X-A":["6Q=="]}}`,
		"/reason-kept": `{"status":200,"reason":"Fine Thanks"}`,
	}
	exec := &scripted{answer: func(ctx context.Context, jobCtx, body []byte) (pool.Result, error) {
		for path, a := range answers {
			if strings.Contains(string(jobCtx), `s:4:"path";s:`+fmt.Sprint(len(path))+`:"`+path+`"`) {
				return pool.Result{Context: []byte(a)}, nil
			}
		}
		return pool.Result{}, fmt.Errorf("no answer for %q", jobCtx)
	}}
	addr := front(t, Options{}, listen.Limits{}, exec)
	for path := range answers {
		resp := roundTrip(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		switch path {
		case "/ok":
			if !strings.HasPrefix(resp, "HTTP/1.1 201") || !strings.Contains(resp, "\r\nX-A: fine\r\n") {
				t.Errorf("%s: %q", path, resp)
			}
		case "/raw-latin1":
			if !strings.HasPrefix(resp, "HTTP/1.1 200") || !strings.Contains(resp, "\r\nX-A: \xe9\r\n") {
				t.Errorf("%s: the raw byte did not reach the wire: %q", path, resp)
			}
		case "/reason-kept":
			if !strings.HasPrefix(resp, "HTTP/1.1 200 Fine Thanks\r\n") {
				t.Errorf("%s: %q", path, statusOf(resp))
			}
		default:
			if !strings.HasPrefix(resp, "HTTP/1.1 502") {
				t.Errorf("%s: got %q, want 502", path, statusOf(resp))
			}
			if strings.Contains(resp, "evil") || strings.Contains(resp, "\r\nX: y") {
				t.Errorf("%s: injected header reached the wire: %q", path, resp)
			}
		}
	}
}

// A job queued for a worker whose client has gone away is cancelled; the
// server's shutdown does not cancel it.
func TestClientGoneCancelsOnlyOnDisconnect(t *testing.T) {
	started := make(chan struct{}, 1)
	result := make(chan error, 1)
	exec := &scripted{answer: func(ctx context.Context, jobCtx, body []byte) (pool.Result, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			result <- ctx.Err()
			return pool.Result{}, ctx.Err()
		case <-time.After(20 * time.Second):
			result <- nil
			return pool.Result{}, nil
		}
	}}
	addr := front(t, Options{}, listen.Limits{}, exec)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	<-started
	c.Close()
	select {
	case err := <-result:
		if err != context.Canceled {
			t.Fatalf("job ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job was not cancelled after its client closed the connection")
	}
}

func TestLargeBodyIsSpooledAndBounded(t *testing.T) {
	dir := t.TempDir()
	var sawFile atomic.Bool
	exec := &scripted{answer: func(ctx context.Context, jobCtx, body []byte) (pool.Result, error) {
		if strings.Contains(string(jobCtx), `s:9:"body_file";`) && len(body) == 0 {
			sawFile.Store(true)
		}
		return pool.Result{Context: []byte(`{"status":200}`), Body: []byte(fmt.Sprint(len(body)))}, nil
	}}
	addr := front(t, Options{MaxBodySize: 1 << 20, BodyBufferSize: 64 << 10, Uploads: multipart.Limits{Dir: dir}}, listen.Limits{}, exec)
	big := strings.Repeat("x", 200<<10)
	resp := roundTrip(t, addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(big), big))
	if !strings.HasPrefix(resp, "HTTP/1.1 200") || !sawFile.Load() {
		t.Fatalf("a 200 KiB body with a 64 KiB buffer was not sent as body_file: %q", statusOf(resp))
	}
	// Chunked, past max_body_size: 413, and nothing left in the upload dir.
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := strings.Repeat("y", 64<<10)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(chunk), chunk)
	}
	b.WriteString("0\r\n\r\n")
	if got := statusOf(roundTrip(t, addr, b.String())); !strings.HasPrefix(got, "HTTP/1.1 413") {
		t.Fatalf("1.25 MiB chunked over a 1 MiB limit: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left, _ := filepathGlob(dir)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spooled files left behind: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readStatus(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func filepathGlob(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out, err
}

func TestBodySlowerThanReadTimeoutGets408(t *testing.T) {
	exec := &scripted{}
	addr := front(t, Options{}, listen.Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 300 * time.Millisecond}, exec)
	resp := roundTrip(t, addr, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nonly ten b")
	if !strings.HasPrefix(statusOf(resp), "HTTP/1.1 408") || exec.jobs.Load() != 0 {
		t.Fatalf("a body that stops arriving: %q (jobs run: %d), want 408 before PHP", statusOf(resp), exec.jobs.Load())
	}
}

func TestMaxConnections(t *testing.T) {
	addr := front(t, Options{}, listen.Limits{MaxConnections: 2}, &scripted{})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		r := bufio.NewReader(c)
		if got := readStatus(t, r); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("connection within the limit: %q", got)
		}
		held = append(held, c)
	}
	if got := statusOf(roundTrip(t, addr, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")); !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Fatalf("third connection with max_connections 2: %q, want 503", got)
	}
	held[0].Close()
	until := time.Now().Add(5 * time.Second)
	for {
		if strings.HasPrefix(statusOf(roundTrip(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")), "HTTP/1.1 200") {
			break
		}
		if time.Now().After(until) {
			t.Fatal("a freed connection slot was not reused")
		}
	}
}

// The same multipart body that gets 400 with Content-Length gets it chunked,
// and leaves no file behind: one parser applies the limits either way.
func TestChunkedMultipartHasThePartLimit(t *testing.T) {
	dir := t.TempDir()
	exec := &scripted{}
	addr := front(t, Options{Uploads: multipart.Limits{Dir: dir, MaxFiles: 20}}, listen.Limits{}, exec)
	var body strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&body, "--XX\r\nContent-Disposition: form-data; name=\"f%d\"; filename=\"a\"\r\n\r\nx\r\n", i)
	}
	body.WriteString("--XX--\r\n")
	var req strings.Builder
	req.WriteString("POST / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nContent-Type: multipart/form-data; boundary=XX\r\n\r\n")
	b := body.String()
	for i := 0; i < len(b); i += 8192 {
		c := b[i:min(i+8192, len(b))]
		fmt.Fprintf(&req, "%x\r\n%s\r\n", len(c), c)
	}
	req.WriteString("0\r\n\r\n")
	if got := statusOf(roundTrip(t, addr, req.String())); !strings.HasPrefix(got, "HTTP/1.1 400") || exec.jobs.Load() != 0 {
		t.Fatalf("20,000 chunked file parts: %q, want 400 before PHP", got)
	}
	if left, _ := filepathGlob(dir); len(left) != 0 {
		t.Fatalf("files left in the upload dir: %d", len(left))
	}
}

// A client that stops reading the answer is cut off at write_timeout.
func TestWriteTimeoutCutsAClientThatStopsReading(t *testing.T) {
	big := make([]byte, 32<<20)
	exec := &scripted{answer: func(context.Context, []byte, []byte) (pool.Result, error) {
		return pool.Result{Context: []byte(`{"status":200}`), Body: big}, nil
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(exec, Options{}).Server(listen.Limits{WriteTimeout: 300 * time.Millisecond, ReadTimeout: 10 * time.Second, MaxHeaderSize: 64 << 10})
	closed := make(chan struct{}, 1)
	srv.ConnState = func(_ net.Conn, st fasthttp.ConnState) {
		if st == fasthttp.StateClosed {
			closed <- struct{}{}
		}
	}
	go srv.Serve(listen.Listen(ln, listen.Options{Front: NewConn}))
	t.Cleanup(func() { srv.Shutdown() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the server kept writing to a client that reads nothing")
	}
	// What the kernels still hold drains, then the stream ends short.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _ := io.Copy(io.Discard, c)
	if n >= int64(len(big)) {
		t.Fatalf("read %d bytes: the whole answer arrived after the write timeout", n)
	}
}
