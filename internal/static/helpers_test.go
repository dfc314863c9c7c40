package static

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
	"github.com/valyala/fasthttp"
)

// staticVariants are the ways a Files can resolve names; every HTTP test runs
// under each. Files that test a particular resolver add theirs in init.
var staticVariants = []struct {
	name  string
	apply func(*Files)
}{{"default", func(*Files) {}}}

// eachStatic runs fn once per variant; start serves s on a real loopback
// socket through a front listener (listen.Listen), as ferry serve does, and
// returns the address.
// A request Files does not answer gets 404 with X-Fell-Through, standing in
// for PHP.
func eachStatic(t *testing.T, fn func(t *testing.T, start func(s *Files) string)) {
	for _, v := range staticVariants {
		t.Run(v.name, func(t *testing.T) {
			fn(t, func(s *Files) string {
				v.apply(s)
				return listenStatic(t, func(ctx *fasthttp.RequestCtx) {
					if !s.Serve(ctx) {
						ctx.Response.Header.Set("X-Fell-Through", "1")
						ctx.SetStatusCode(fasthttp.StatusNotFound)
						ctx.SetBodyString("php")
					}
				})
			})
		})
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
	go func() { done <- srv.Serve(listen.Listen(ln, listen.Options{Front: listen.NewConn})) }()
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

func wantFellThrough(t *testing.T, r *fasthttp.Response, what string) {
	t.Helper()
	if !fellThrough(r) {
		t.Errorf("%s: status %d body %.80q, want it handed to PHP", what, r.StatusCode(), r.Body())
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

// listing returns every name under dir, for spotting files Files created.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
