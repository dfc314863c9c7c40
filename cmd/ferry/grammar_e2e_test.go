package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Exchange sends one HTTP/2 request with exactly these header fields
// (pseudo-headers included, unchecked: Go's Transport refuses to send a
// malformed :path or :authority) over h2c prior knowledge, and returns the
// response's :status, or "RST_STREAM" when the server refused the stream.
func h2Exchange(t *testing.T, addr string, fields ...string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(c, c)
	fr.WriteSettings()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for i := 0; i < len(fields); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("%q: no answer: %v", fields, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			hf, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hf {
				if h.Name == ":status" {
					return h.Value
				}
			}
		case *http2.RSTStreamFrame:
			return "RST_STREAM"
		case *http2.GoAwayFrame:
			t.Fatalf("%q: GOAWAY %v", fields, f.ErrCode)
		}
	}
}

// seenByPHP reads what testdata/seen.php wrote down: one [method, uri, host,
// path] a request.
func seenByPHP(t *testing.T, log string) [][4]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var seen [][4]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var e [4]string
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		seen = append(seen, e)
	}
	return seen
}

// Malformed request-targets and Host values (RFC 9112 §3.2, RFC 9110 §7.2)
// get 400 from the front over HTTP/1.1 and h2c alike and never reach PHP;
// the valid forms reach it with the host and URI they name. On cef7064 most
// of the malformed ones reached PHP, and "//evil/x?u=http://y" gave it the
// host "evil".
func TestMalformedTargetsAndHostsNeverReachPHP(t *testing.T) {
	frontOnly(t, "its table runs over h2c too; direct mode's parser gets it in direct_verdicts_e2e_test.go")
	log := filepath.Join(t.TempDir(), "seen.log")
	s := startFerry(t, fmt.Sprintf(`server:
  address: "%%ADDR%%"
  http2:
    h2c: true
admin:
  socket: "%%ADMIN%%"
pool:
  command: ["php", "%%DIR%%/testdata/seen.php"]
  num_workers: 1
  env: {FERRY_SEEN_LOG: %q}
`, log))
	addr := strings.TrimPrefix(s.url, "http://")

	h1 := []struct{ name, head, status string }{
		{"no leading slash", "GET x HTTP/1.1\r\nHost: a", "400"},
		{"asterisk with GET", "GET * HTTP/1.1\r\nHost: a", "400"},
		{"authority-form with GET", "GET a:80 HTTP/1.1\r\nHost: a", "400"},
		{"CONNECT with a path", "CONNECT /x HTTP/1.1\r\nHost: a", "400"},
		{"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443", "405"},
		{"digit before the scheme", "GET 1http://b/x HTTP/1.1\r\nHost: b", "400"},
		{"scheme other than http(s)", "GET ftp://b/x HTTP/1.1\r\nHost: b", "400"},
		{"userinfo", "GET http://u@b/x HTTP/1.1\r\nHost: b", "400"},
		{"absolute-form port range", "GET http://b:99999/x HTTP/1.1\r\nHost: b", "400"},
		{"fragment", "GET /x#f HTTP/1.1\r\nHost: a", "400"},
		{"bad escape", "GET /x%zz HTTP/1.1\r\nHost: a", "400"},
		{"escaped NUL", "GET /x%00 HTTP/1.1\r\nHost: a", "400"},
		{"above the root", "GET /../x HTTP/1.1\r\nHost: a", "400"},
		{"above the root, escaped", "GET /a/..%2f..%2fx HTTP/1.1\r\nHost: a", "400"},
		{"Host port letters", "GET /x HTTP/1.1\r\nHost: a:x", "400"},
		{"Host port range", "GET /x HTTP/1.1\r\nHost: a:99999", "400"},
		{"Host two ports", "GET /x HTTP/1.1\r\nHost: a:1:2", "400"},
		{"Host slash", "GET /x HTTP/1.1\r\nHost: a/b", "400"},
		{"Host backslash", "GET /x HTTP/1.1\r\nHost: a\\b", "400"},
		{"Host escaped slash", "GET /x HTTP/1.1\r\nHost: a%2fb", "400"},
		{"Host userinfo", "GET /x HTTP/1.1\r\nHost: user@a", "400"},
		{"Host bad IP-literal", "GET /x HTTP/1.1\r\nHost: [zz]", "400"},
		{"Host unclosed IP-literal", "GET /x HTTP/1.1\r\nHost: [::1", "400"},
		{"Host empty label", "GET /x HTTP/1.1\r\nHost: a..b", "400"},
		{"Host port only", "GET /x HTTP/1.1\r\nHost: :80", "400"},
		{"Host empty", "GET /x HTTP/1.1\r\nHost: ", "400"},
		{"Host control byte", "GET /x HTTP/1.1\r\nHost: a\x01b", "400"},
		{"Host missing", "GET /x HTTP/1.1", "400"},
		{"two Hosts", "GET /x HTTP/1.1\r\nHost: a\r\nHost: b", "400"},
		{"bad Host beside absolute-form", "GET http://b/x HTTP/1.1\r\nHost: a/b", "400"},
	}
	for _, c := range h1 {
		resp := rawExchange(t, addr, c.head+"\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(resp, "HTTP/1.1 "+c.status+" ") {
			t.Errorf("HTTP/1.1 %s: %q, want %s", c.name, resp, c.status)
		}
	}

	h2 := []struct {
		name   string
		fields []string
		want   string
	}{
		{":authority port letters", []string{":authority", "a:x"}, "400"},
		{":authority port range", []string{":authority", "a:99999"}, "400"},
		{":authority slash", []string{":authority", "a/b"}, "400"},
		{":authority backslash", []string{":authority", "a\\b"}, "400"},
		{":authority bad IP-literal", []string{":authority", "[zz]"}, "400"},
		{":authority empty label", []string{":authority", "a..b"}, "400"},
		{":authority port only", []string{":authority", ":80"}, "400"},
		{":authority space", []string{":authority", "a b"}, "400"},
		{"no :authority nor Host", nil, "400"},
		{"Host differs from :authority", []string{":authority", "a", "host", "b"}, "400"},
		{"bad Host without :authority", []string{"host", "a:x"}, "400"},
		{"absolute-form :path", []string{":authority", "a", ":path", "http://b/x"}, "400"},
		{"asterisk with GET", []string{":authority", "a", ":path", "*"}, "400"},
		{"fragment", []string{":authority", "a", ":path", "/x#f"}, "400"},
		{"above the root", []string{":authority", "a", ":path", "/../x"}, "400"},
		{"escaped NUL", []string{":authority", "a", ":path", "/x%00"}, "400"},
		// net/http refuses these streams itself before the front sees them.
		{"no leading slash", []string{":authority", "a", ":path", "x"}, "RST_STREAM"},
		{"bad escape", []string{":authority", "a", ":path", "/x%zz"}, "RST_STREAM"},
	}
	for _, c := range h2 {
		fields := []string{":method", "GET", ":scheme", "http"}
		path := "/x"
		for i := 0; i < len(c.fields); i += 2 {
			if c.fields[i] == ":path" {
				path = c.fields[i+1]
			}
		}
		fields = append(fields, ":path", path)
		for i := 0; i < len(c.fields); i += 2 {
			if c.fields[i] != ":path" {
				fields = append(fields, c.fields[i], c.fields[i+1])
			}
		}
		if got := h2Exchange(t, addr, fields...); got != c.want {
			t.Errorf("h2c %s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := h2Exchange(t, addr, ":method", "CONNECT", ":authority", "a:443"); got != "405" {
		t.Errorf("h2c CONNECT: %s, want 405", got)
	}
	if _, err := exec.LookPath("curl"); err == nil {
		// curl turns a Host header into :authority.
		out, _ := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge",
			"-H", "Host: a:x", s.url+"/x").Output()
		if string(out) != "400" {
			t.Errorf("curl --http2-prior-knowledge with Host a:x: %q, want 400", out)
		}
	}
	if seen := seenByPHP(t, log); len(seen) > 0 {
		t.Fatalf("PHP saw malformed requests: %q", seen)
	}

	// The valid forms reach PHP, with the host and URI the target names.
	for _, raw := range []string{
		"GET http://B:8080/abs?q HTTP/1.1\r\nHost: a\r\n",
		"GET //evil/x?u=http://y HTTP/1.1\r\nHost: good\r\n",
		"GET /a|b?c[]=1 HTTP/1.1\r\nHost: [::1]:80\r\n",
	} {
		if resp := rawExchange(t, addr, raw+"Connection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 200 ") {
			t.Errorf("%q: %q", raw, resp)
		}
	}
	if got := h2Exchange(t, addr, ":method", "GET", ":scheme", "http", ":path", "//evil/y?u=http://z", ":authority", "good"); got != "200" {
		t.Errorf("h2c //evil: %s", got)
	}
	if got := h2Exchange(t, addr, ":method", "GET", ":scheme", "http", ":path", "/same", ":authority", "a", "host", "A"); got != "200" {
		t.Errorf("h2c Host beside the same :authority: %s", got)
	}
	if resp := rawExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 200 ") {
		t.Errorf("OPTIONS *: %q", resp)
	}
	want := [][4]string{
		{"GET", "/abs?q", "b:8080", "/abs"},
		{"GET", "//evil/x?u=http://y", "good", "/evil/x"},
		{"GET", "/a|b?c[]=1", "[::1]:80", "/a|b"},
		{"GET", "//evil/y?u=http://z", "good", "/evil/y"},
		{"GET", "/same", "a", "/same"},
	}
	if _, err := exec.LookPath("curl"); err == nil {
		// curl --http2 on http:// upgrades (Upgrade: h2c): the first request
		// is answered on stream 1; one that fails the checks is refused in
		// HTTP/1.1 before it may switch.
		for _, c := range []struct{ target, host, want string }{
			{"//evil/up?u=http://y", "good", "200 2"},
			{"/x", "a/b", "400 1.1"},
			{"/x", "a..b", "400 1.1"},
		} {
			out, _ := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{http_version}", "--http2",
				"--request-target", c.target, "-H", "Host: "+c.host, s.url+"/x").Output()
			if string(out) != c.want {
				t.Errorf("curl --http2 %s Host %s: %q, want %q", c.target, c.host, out, c.want)
			}
		}
		want = append(want, [4]string{"GET", "//evil/up?u=http://y", "good", "/evil/up"})
	}
	if seen := seenByPHP(t, log); fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("PHP saw\n%q\nwant\n%q", seen, want)
	}
}
