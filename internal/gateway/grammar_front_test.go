package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// phpPair is how a key and a string value appear in the job context.
func phpPair(k, v string) string {
	return fmt.Sprintf(`s:%d:"%s";s:%d:"%s";`, len(k), k, len(v), v)
}

// Through the front: a malformed target or Host gets 400 and no job; a
// valid one reaches PHP with the path, URI and host the target names.
func TestFrontTargetGrammar(t *testing.T) {
	exec := &scripted{}
	addr := front(t, Options{}, listen.Limits{}, exec)
	for _, c := range []struct {
		name, raw, status string
		php               []string // pairs PHP must get, when it gets the request
	}{
		{"no leading slash", "GET echo HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"authority with GET", "GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"CONNECT with a path", "CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"CONNECT without a port", "CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", "405", nil},
		{"digit before a scheme", "GET 1http://b/x HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"other scheme", "GET ftp://b/x HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"userinfo", "GET http://u@b/x HTTP/1.1\r\nHost: b\r\n\r\n", "400", nil},
		{"fragment", "GET /x#f HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"bad escape", "GET /x%zz HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"escaped NUL", "GET /x%00 HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"above the root", "GET /a/..%2f../x HTTP/1.1\r\nHost: a\r\n\r\n", "400", nil},
		{"Host port letters", "GET / HTTP/1.1\r\nHost: a:x\r\n\r\n", "400", nil},
		{"Host port range", "GET / HTTP/1.1\r\nHost: a:99999\r\n\r\n", "400", nil},
		{"Host two ports", "GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n", "400", nil},
		{"Host slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "400", nil},
		{"Host backslash", "GET / HTTP/1.1\r\nHost: a\\b\r\n\r\n", "400", nil},
		{"Host escaped slash", "GET / HTTP/1.1\r\nHost: a%2fb\r\n\r\n", "400", nil},
		{"Host userinfo", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", "400", nil},
		{"Host bad IP-literal", "GET / HTTP/1.1\r\nHost: [zz]\r\n\r\n", "400", nil},
		{"Host empty label", "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", "400", nil},
		{"Host empty", "GET / HTTP/1.1\r\nHost: \r\n\r\n", "400", nil},
		{"Host empty, HTTP/1.0", "GET / HTTP/1.0\r\nHost: \r\n\r\n", "400", nil},
		{"Host port only", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", "400", nil},
		{"Host non-ASCII", "GET / HTTP/1.1\r\nHost: a\xff\r\n\r\n", "400", nil},
		{"bad Host beside absolute-form", "GET http://b/x HTTP/1.1\r\nHost: a/b\r\n\r\n", "400", nil},
		{"absolute-form without Host", "GET http://b/x HTTP/1.1\r\n\r\n", "400", nil},

		{"absolute-form replaces Host", "GET http://B:8080/x?y HTTP/1.1\r\nHost: a\r\n\r\n", "200",
			[]string{phpPair("uri", "/x?y"), phpPair("path", "/x"), phpPair("host", "b:8080"), `s:4:"Host";a:1:{i:0;s:6:"B:8080";}`}},
		{"absolute-form without a path", "GET https://b?q HTTP/1.1\r\nHost: b\r\n\r\n", "200",
			[]string{phpPair("uri", "/?q"), phpPair("path", "/"), phpPair("query", "q"), phpPair("host", "b")}},
		{"absolute-form, HTTP/1.0 without Host", "GET http://b/x HTTP/1.0\r\n\r\n", "200",
			[]string{phpPair("uri", "/x"), phpPair("host", "b")}},
		{"scheme-relative look-alike", "GET //evil/x?u=http://y HTTP/1.1\r\nHost: good\r\n\r\n", "200",
			[]string{phpPair("uri", "//evil/x?u=http://y"), phpPair("path", "/evil/x"), phpPair("host", "good")}},
		{"scheme-relative look-alike without Host", "GET //evil/x HTTP/1.0\r\n\r\n", "200",
			[]string{phpPair("path", "/evil/x"), phpPair("host", "")}},
		{"tolerated bytes", "GET /a|b?c[]=1&d={} HTTP/1.1\r\nHost: A.example\r\n\r\n", "200",
			[]string{phpPair("path", "/a|b"), phpPair("host", "a.example")}},
		{"IP-literal Host", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", "200", []string{phpPair("host", "[::1]:80")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := exec.jobs.Load()
			resp := roundTrip(t, addr, strings.TrimSuffix(c.raw, "\r\n")+"Connection: close\r\n\r\n")
			if !strings.HasPrefix(statusOf(resp), "HTTP/1.1 "+c.status) {
				t.Fatalf("got %q, want %s", statusOf(resp), c.status)
			}
			reached := exec.jobs.Load() != before
			if reached != (c.status == "200") {
				t.Fatalf("reached PHP: %v", reached)
			}
			exec.mu.Lock()
			job := string(exec.last)
			exec.mu.Unlock()
			for _, p := range c.php {
				if !strings.Contains(job, p) {
					t.Errorf("PHP's context lacks %s:\n%s", p, job)
				}
			}
		})
	}
}

func TestFrontAnswersOptionsAsterisk(t *testing.T) {
	exec := &scripted{}
	addr := front(t, Options{}, listen.Limits{}, exec)
	resp := roundTrip(t, addr, "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(statusOf(resp), "HTTP/1.1 200") || !strings.Contains(resp, "Content-Length: 0") || exec.jobs.Load() != 0 {
		t.Fatalf("OPTIONS *: %q, %d jobs", resp, exec.jobs.Load())
	}
	// Its body is read off the connection, not parsed as the next request: a request
	// smuggled in it must not reach PHP. A body that cannot be read closes the connection.
	for _, body := range []string{
		"Transfer-Encoding: chunked\r\n\r\n1e\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n\r\n0\r\n\r\n",
		"Transfer-Encoding: chunked\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
		"Content-Length: 35\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
	} {
		resp := halfClosedExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: a\r\n"+body)
		if strings.Count(resp, "HTTP/1.1 ") != 1 || !strings.HasPrefix(statusOf(resp), "HTTP/1.1 200") || exec.jobs.Load() != 0 {
			t.Errorf("OPTIONS * with %q: %q, %d jobs; want one 200, then the close", body, resp, exec.jobs.Load())
		}
	}
}

// halfClosedExchange sends raw on a keep-alive connection, half-closes it and reads every
// answer until the server closes: what the server made of all the bytes.
func halfClosedExchange(t *testing.T, addr, raw string) string {
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
	c.(*net.TCPConn).CloseWrite()
	b, _ := io.ReadAll(c)
	return string(b)
}

func plainCtx(tb testing.TB, raw string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, nil, nil)
	return ctx
}

const plainRequest = "GET /blog/2024/hello-world.php?id=42&sort=desc HTTP/1.1\r\nHost: shop.example.com:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n"

// The checks cost the plain request a scan of its target and Host and no
// allocation.
func TestCheckRequestPlainDoesNotAllocate(t *testing.T) {
	ctx := plainCtx(t, plainRequest)
	if n := testing.AllocsPerRun(200, func() {
		if r := checkRequest(ctx, 100); r != nil {
			t.Fatal(r.msg)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

func BenchmarkCheckRequest(b *testing.B) {
	ctx := plainCtx(b, plainRequest)
	b.ReportAllocs()
	for b.Loop() {
		if checkRequest(ctx, 100) != nil {
			b.Fatal("rejected")
		}
	}
}
