package gateway

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// cookieWire is the context's cookies for a Cookie header, as "name=value"
// entries in order, quoted.
func cookieWire(h *Handler, raw string) string {
	l := &lists{raw: []byte(raw)}
	plain, tree := h.parseCookies(l)
	if tree == nil && len(plain) == 0 {
		return ""
	}
	d := unser{b: appendCookies(nil, plain, tree)}
	return d.pairs()
}

// pairs reads a flat serialize() array of string values, in order.
func (d *unser) pairs() string {
	var out []string
	d.i += 2 // "a:"
	s, _ := d.upto(':')
	var n int
	fmt.Sscan(s, &n)
	d.i++ // "{"
	for range n {
		k, _ := d.value()
		v, _ := d.value()
		out = append(out, fmt.Sprintf("%v=%q", k, v))
	}
	return strings.Join(out, " ")
}

// Each expectation is what PHP 8.2's own $_COOKIE parsing (php -S) makes of
// the header, written as the flat entries parse_str() rebuilds it from.
func TestCookiesParsedAsPHPDoes(t *testing.T) {
	h := New(nil, Options{})
	for _, c := range []struct{ raw, want string }{
		{"", ""},
		{"a=1", `a="1"`},
		{"PHPSESSID=abc; theme=dark", `PHPSESSID="abc" theme="dark"`},
		// issue 30's example
		{`a.b=3; a b=4; e; i="q"; j[]=1; j[]=2`, `a_b="3" e="" i="\"q\"" j[0]="1" j[1]="2"`},
		{"a=1; a=2", `a="1"`},
		{"a=1;a=2;;  \tb=3;=4;==5; ;", `a="1" b="3"`},
		{"a=x=y; b=%41%2b+%zz%4; c=%00", `a="x=y" b="A++%zz%4" c="\x00"`},
		{"%41=1; 7=a; -7=b; 07=c; -0=d", `%41="1" 7="a" -7="b" 07="c" -0="d"`},
		{"a[x]=1; a[x]=2; a=3; b=1; b[y]=2; b=3", `a[x]="2" b[y]="2"`},
		{"n[9223372036854775807]=1; n[]=2; m[-5]=a; m[]=b", `n[9223372036854775807]="1" m[-5]="a" m[-4]="b"`},
		{"o[ 7]=1; o[\t]=2; o[ ]=3; p[a]b=1; q[a[b=1; r[a][b=1; s[x[y]]=1", `o[ 7]="1" o[0]="2" o[1]="3" p[a]="1" q_a_b="1" r[a]="1" s[x[y]="1"`},
		{"._Host-a=1; __Host-a=2; .__Secure-b=3; __Secure.c=4; [x]=5; [=6", `__Host-a="2" ___Secure-b="3" __Secure_c="4"`},
		// the header is a C string to PHP: it ends at a NUL byte
		{"a\x00b=1; c=2", `a=""`},
		{"c=2; a=b\x00c; d=3", `c="2" a="b"`},
		{"d" + strings.Repeat("[a]", 64) + "=1; d=2; e" + strings.Repeat("[a]", 63) + "=1", "d" + strings.Repeat("[a]", 64) + `="1" e` + strings.Repeat("[a]", 63) + `="1"`},
		{"k=1; d" + strings.Repeat("[a]", 65) + "=1; k=2", `k="1"`},
	} {
		if got := cookieWire(h, c.raw); got != c.want {
			t.Errorf("Cookie: %q\n got %s\nwant %s", c.raw, got, c.want)
		}
	}
}

func TestCookieLimitsFollowPHPSettings(t *testing.T) {
	raw := strings.Repeat("v[]=1;", 10) + "a=1; b[c][d]=2"
	if got, want := cookieWire(New(nil, Options{MaxInputVars: 11, MaxInputNesting: 1}), raw),
		`v[0]="1" v[1]="1" v[2]="1" v[3]="1" v[4]="1" v[5]="1" v[6]="1" v[7]="1" v[8]="1" v[9]="1" a="1"`; got != want {
		t.Errorf("max_input_vars 11, max_input_nesting_level 1:\n got %s\nwant %s", got, want)
	}
	// max_input_vars counts what PHP counts: pieces with a name, kept or not.
	if got := cookieWire(New(nil, Options{MaxInputVars: 2}), "a=1; ;=x; a=2; b=3"); got != `a="1"` {
		t.Errorf("max_input_vars 2: %s", got)
	}
}

// PHP sees the Cookie field lines as nginx passes them: joined with "; ",
// each trimmed, a folded line continued with a space.
func TestCookieLinesJoinedAsNginxDoes(t *testing.T) {
	raw := "Host: h\r\nCookie: a=1 \r\nX-Cookie: no=1\r\ncookie:b=2\r\nCOOKIE: c=3;\r\n  d=4\r\nSet-Cookie: no=2\r\nCookies: no=3\r\n\r\n"
	if got, want := string(cookieLines(nil, []byte(raw))), "a=1; b=2; c=3; d=4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := cookieLines(nil, []byte("Host: h\r\n\n\r\n")); len(got) != 0 {
		t.Errorf("no cookie line: %q", got)
	}
}

// The worker's Cookie header is the client's, not fasthttp's rebuild of it
// (which unquotes, and drops a name without "=").
func TestCookieHeaderReachesPHPAsSent(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"GET / HTTP/1.1\r\nHost: h\r\nCookie: e; i=\"q\"\r\nCookie: j=1\r\n\r\n", `"Cookie":["e; i=\"q\"; j=1"]`},
		{"GET / HTTP/1.1\r\nHost: h\r\nCookie: =\r\n\r\n", `"Cookie":["="]`},
	} {
		enc := testHandler.encodeRequest(nil, requestCtx(t, c.raw), nil, nil, false, "")
		if got := unserializeInPHP(t, enc); !strings.Contains(got, c.want) {
			t.Errorf("%q: PHP got %s, want %s in it", c.raw, got, c.want)
		}
	}
}

// The HTTP/2 path: net/http's cookie fields, joined, are what PHP parses,
// over TLS or not (the shim's connection differs).
func TestCookieOverHTTP2IsTheJoinedFields(t *testing.T) {
	for _, secure := range []bool{false, true} {
		var got string
		srv := listen.StdServer(func(ctx *fasthttp.RequestCtx) { got = string(rawCookie(nil, ctx)) }, listen.Limits{}, 0, secure, slog.Default())
		r := httptest.NewRequest("GET", "/", nil)
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
		r.Header["Cookie"] = []string{"a.b=1", "e"}
		r.TLS = nil
		if secure {
			r.TLS = &tls.ConnectionState{}
		}
		srv.Handler.ServeHTTP(httptest.NewRecorder(), r)
		if want := `a.b=1; e`; got != want {
			t.Errorf("tls=%v: got %q, want %q", secure, got, want)
		}
	}
}

// The worst header within server.max_header_size (64 KiB): about 500 names
// 64 levels deep, 31,000 arrays. Arrays come from a slab: an allocation or
// two each (65,000 in all) made such a header cost the front about twice the
// CPU.
func TestDeepCookiesCostFewAllocations(t *testing.T) {
	h := New(nil, Options{})
	raw := []byte(strings.Repeat("a"+strings.Repeat("[]", 64)+"=1;", 64<<10/133))
	allocs := testing.AllocsPerRun(3, func() {
		plain, tree := h.parseCookies(&lists{raw: raw})
		appendCookies(nil, plain, tree)
	})
	if allocs > 5000 {
		t.Errorf("%.0f allocations for %d bytes of cookies", allocs, len(raw))
	}
}
