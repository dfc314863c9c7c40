package gateway

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/observe"
	"github.com/ferry-php/ferry/internal/static"
	"github.com/valyala/fasthttp"
)

// The static files as the gateway serves them, ahead of PHP and behind the
// access log; package static tests the files themselves. The helpers below
// are its test helpers' counterparts.

// With the access log and the request ids on, responses are the same. Only
// static files are requested: the Handler has no pool to fall through to.
func TestStaticWithAccessLog(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f.txt")
	tree(t, root, map[string]string{"f.txt": "first", "f.txt.gz": "gz bytes"})
	logPath := filepath.Join(t.TempDir(), "access.log")
	alog, err := observe.OpenAccessLog(observe.FormatCombined, logPath)
	if err != nil {
		t.Fatal(err)
	}
	h := New(nil, Options{Static: &static.Files{Dir: root, Prefix: "/"}})
	addr := listenStatic(t, observe.NewFront(h.Serve, observe.FrontOptions{AccessLog: alog, RequestIDs: true, Metrics: observe.NewMetrics(), Timing: JobTiming}))
	wantFile(t, fetch(t, addr, "GET", "/f.txt"), "first", "first")
	if err := os.WriteFile(p, []byte("second, longer than the first"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantFile(t, fetch(t, addr, "GET", "/f.txt"), "rewritten", "second, longer than the first")
	if r := fetch(t, addr, "GET", "/f.txt", "Range", "bytes=0-5"); string(r.Body()) != "second" || r.StatusCode() != 206 {
		t.Errorf("range: %d %q", r.StatusCode(), r.Body())
	}
	r := fetch(t, addr, "GET", "/f.txt", "Accept-Encoding", "gzip")
	wantFile(t, r, "gzip", "gz bytes")
	if r := fetch(t, addr, "HEAD", "/f.txt"); r.Header.ContentLength() != 29 || r.StatusCode() != 200 {
		t.Errorf("HEAD: %d Content-Length %d", r.StatusCode(), r.Header.ContentLength())
	}
	alog.Close()
	logged, _ := os.ReadFile(logPath)
	if !strings.Contains(string(logged), `"GET /f.txt HTTP/1.1" 206 6 `) {
		t.Errorf("access log lacks the range request:\n%s", logged)
	}
}

func listenStatic(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h, Name: "ferry-test"}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(listen.Listen(ln, listen.Options{Front: NewConn})) }()
	t.Cleanup(func() {
		srv.Shutdown()
		<-done
	})
	return ln.Addr().String()
}

// fetch sends one raw request (the target goes out byte for byte) and reads
// the response; it fails the test if anything follows the response.
func fetch(t *testing.T, addr, method, target string, hdr ...string) *fasthttp.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n")
	for i := 0; i+1 < len(hdr); i += 2 {
		b.WriteString(hdr[i] + ": " + hdr[i+1] + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp := &fasthttp.Response{}
	resp.SkipBody = method == "HEAD"
	if err := resp.Read(br); err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if rest, _ := io.ReadAll(br); len(rest) > 0 {
		t.Errorf("%s %s: %d bytes after the response: %.60q", method, target, len(rest), rest)
	}
	return resp
}

func fellThrough(r *fasthttp.Response) bool { return string(r.Header.Peek("X-Fell-Through")) == "1" }

// wantFile checks a 200 carrying exactly body.
func wantFile(t *testing.T, r *fasthttp.Response, what, body string) {
	t.Helper()
	if fellThrough(r) || r.StatusCode() != 200 || string(r.Body()) != body {
		t.Errorf("%s: status %d fell-through=%v body %.80q, want 200 %.80q", what, r.StatusCode(), fellThrough(r), r.Body(), body)
	}
}

// tree writes files (name -> content) under dir, creating parents.
func tree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
