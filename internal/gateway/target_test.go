package gateway

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// The shortcut must give what fasthttp's URI parse gives, byte for byte,
// whenever it is taken.
func checkTarget(t *testing.T, raw []byte) (taken bool) {
	t.Helper()
	var a, b fasthttp.Request
	if a.Read(bufio.NewReader(bytes.NewReader(raw))) != nil {
		return false
	}
	b.Read(bufio.NewReader(bytes.NewReader(raw)))
	path, query, host := target(&a)
	u := b.URI()
	if !bytes.Equal(path, u.Path()) || !bytes.Equal(query, u.QueryString()) || !bytes.Equal(host, b.Host()) {
		t.Fatalf("%q: shortcut gave path %q query %q host %q, fasthttp %q %q %q",
			raw, path, query, host, u.Path(), u.QueryString(), b.Host())
	}
	_, _, ok := plainTarget(a.Header.RequestURI())
	return ok && plainHost(a.Header.Host())
}

func TestTargetShortcut(t *testing.T) {
	for _, c := range []struct {
		target, host string
		taken        bool
	}{
		{"/", "127.0.0.1:8181", true},
		{"/a/b.php?x=1&y=%20z", "example.com", true},
		{"/a:b@c!$&'()*+,;=~_-", "h", true},
		{"/?", "h", true},
		{"/a?b?c=d/e", "h", true},
		{"/a%20b", "h", false},
		{"/a/./b", "h", false},
		{"/a/../b", "h", false},
		{"/a/..", "h", false},
		{"/.well-known/x", "h", false},
		{"//a", "h", false},
		{"/a//b", "h", false},
		{"/a#frag", "h", false},
		{"/a?b#frag", "h", false},
		{"/a?next=http://evil/", "h", false},
		{"/a\\b", "h", false},
		{"*", "h", false},
		{"http://other/x", "h", false},
		{"/x", "Example.COM", false},
		{"/x", "[::1]:80", false},
		{"/x", "h:80:90", false},
		{"/x", "h:8x", false},
		{"/x", "a_b", false},
		{"/x", "h:", true},
		{"/x", ":80", true},
		{"/x", "", false},
	} {
		raw := "GET " + c.target + " HTTP/1.1\r\nHost: " + c.host + "\r\n\r\n"
		if got := checkTarget(t, []byte(raw)); got != c.taken {
			t.Errorf("%s Host %q: shortcut taken %v, want %v", c.target, c.host, got, c.taken)
		}
	}
}

func FuzzTargetShortcut(f *testing.F) {
	for _, s := range []string{"/", "/a/b?c=d", "/a%2Fb", "/a/./b?x", "/x?y://z", "//x"} {
		f.Add(s, "example.com:8080")
	}
	f.Fuzz(func(t *testing.T, target, host string) {
		if strings.ContainsAny(target, " \r\n") || strings.ContainsAny(host, "\r\n") {
			return
		}
		checkTarget(t, []byte("GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"))
	})
}
