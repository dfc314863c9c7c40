package gateway

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/valyala/fasthttp"
)

// FuzzEncodeRequest checks that whatever request fasthttp accepts, the job
// context is well-formed serialize() data (PHP would otherwise fail the job)
// that carries the method and target unchanged.
func FuzzEncodeRequest(f *testing.F) {
	f.Add([]byte(wrkRequest))
	f.Add([]byte("POST /a?b=c HTTP/1.0\r\nHost: h\r\nCookie: a=1; a=2; b=\"x\"\r\nX: 1\r\nX: 2\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-A: 1\r\nCookie: k=v\r\n", 20) + "\r\n"))
	h := New(nil, Options{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var req fasthttp.Request
		if req.Read(bufio.NewReader(bytes.NewReader(raw))) != nil {
			return
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, nil)
		enc := h.encodeRequest(nil, &ctx, [][2]string{{"f", "v"}}, []multipart.Upload{{Field: "u", Name: "a/b", Path: "/p"}}, true, "")
		d := unser{b: enc}
		top, ok := d.value()
		if !ok || d.i != len(enc) {
			t.Fatalf("malformed serialize() data at byte %d: %q", d.i, enc)
		}
		m, _ := top.(map[string]any)
		if m["method"] != string(req.Header.Method()) || m["uri"] != string(req.Header.RequestURI()) {
			t.Fatalf("method/uri changed: %v", m)
		}
	})
}

// unser reads the subset of PHP's serialize() format the encoder writes.
type unser struct {
	b []byte
	i int
}

func (d *unser) upto(c byte) (string, bool) {
	j := bytes.IndexByte(d.b[d.i:], c)
	if j < 0 {
		return "", false
	}
	s := string(d.b[d.i : d.i+j])
	d.i += j + 1
	return s, true
}

func (d *unser) value() (any, bool) {
	if d.i+2 > len(d.b) || d.b[d.i+1] != ':' {
		return nil, false
	}
	kind := d.b[d.i]
	d.i += 2
	switch kind {
	case 'i':
		s, ok := d.upto(';')
		n, err := strconv.ParseInt(s, 10, 64)
		return n, ok && err == nil
	case 'b':
		s, ok := d.upto(';')
		return s == "1", ok && (s == "0" || s == "1")
	case 's':
		s, ok := d.upto(':')
		n, err := strconv.Atoi(s)
		if !ok || err != nil || n < 0 || d.i+n+3 > len(d.b) || d.b[d.i] != '"' || d.b[d.i+1+n] != '"' || d.b[d.i+2+n] != ';' {
			return nil, false
		}
		v := string(d.b[d.i+1 : d.i+1+n])
		d.i += n + 3
		return v, true
	case 'a':
		s, ok := d.upto(':')
		n, err := strconv.Atoi(s)
		if !ok || err != nil || n < 0 || d.i >= len(d.b) || d.b[d.i] != '{' {
			return nil, false
		}
		d.i++
		m := map[string]any{}
		for k := 0; k < n; k++ {
			key, ok := d.value()
			if !ok {
				return nil, false
			}
			switch key.(type) {
			case string, int64:
			default:
				return nil, false
			}
			v, ok := d.value()
			if !ok {
				return nil, false
			}
			ks := ""
			switch kk := key.(type) {
			case string:
				ks = kk
			case int64:
				ks = strconv.FormatInt(kk, 10)
			}
			if _, dup := m[ks]; dup {
				return nil, false // PHP would silently drop one
			}
			m[ks] = v
		}
		if d.i >= len(d.b) || d.b[d.i] != '}' {
			return nil, false
		}
		d.i++
		return m, true
	}
	return nil, false
}
