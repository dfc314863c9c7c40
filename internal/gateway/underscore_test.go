package gateway

import (
	"bytes"
	"slices"
	"testing"

	"github.com/valyala/fasthttp"
)

// What PHP would see as HTTP_X_FORWARDED_FOR is the proxy's field alone,
// whether fasthttp read the request (HTTP/1.1) or net/http did (HTTP/2, TLS:
// copyRequest builds the header field by field, with no raw block).
func TestDropUnderscoredFields(t *testing.T) {
	raw := "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 1.2.3.4\r\nX_Forwarded_For: 6.6.6.6\r\n" +
		"User-Agent: X11; Linux x86_64\r\nx_forwarded_for: 7.7.7.7\r\nCookie: _ga=1\r\nA_: b\r\n\r\n"
	parsed := &requestCtx(t, raw).Request.Header
	var built fasthttp.RequestHeader
	for _, kv := range [][2]string{{"Host", "x"}, {"X-Forwarded-For", "1.2.3.4"}, {"X_forwarded_for", "6.6.6.6"},
		{"User-Agent", "X11; Linux x86_64"}, {"X_forwarded_for", "7.7.7.7"}, {"Cookie", "_ga=1"}, {"A_", "b"}} {
		built.Add(kv[0], kv[1])
	}
	for name, h := range map[string]*fasthttp.RequestHeader{"parsed": parsed, "built": &built} {
		dropped := dropUnderscored(h)
		if !slices.Equal(dropped, []string{"X_forwarded_for", "A_"}) {
			t.Errorf("%s: dropped %q", name, dropped)
		}
		var left []string
		h.VisitAll(func(k, v []byte) {
			if bytes.IndexByte(k, '_') >= 0 {
				t.Errorf("%s: %s: %s is still there", name, k, v)
			}
			left = append(left, string(k)+": "+string(v))
		})
		want := []string{"Host: x", "User-Agent: X11; Linux x86_64", "X-Forwarded-For: 1.2.3.4", "Cookie: _ga=1"}
		slices.Sort(left)
		slices.Sort(want)
		if !slices.Equal(left, want) {
			t.Errorf("%s: left %q, want %q", name, left, want)
		}
	}
	if d := dropUnderscored(&requestCtx(t, wrkRequest).Request.Header); d != nil {
		t.Errorf("a request without _ lost %q", d)
	}
}

// The filter on the request wrk sends, and on a browser's (whose User-Agent
// and cookies hold "_", so each name is looked at).
func BenchmarkDropUnderscored(b *testing.B) {
	browser := "GET / HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
		"Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n" +
		"Cookie: _ga=GA1.1.1; session_id=abc\r\nConnection: keep-alive\r\nUpgrade-Insecure-Requests: 1\r\n\r\n"
	for name, raw := range map[string]string{"wrk": wrkRequest, "browser": browser} {
		h := &requestCtx(b, raw).Request.Header
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if dropUnderscored(h) != nil {
					b.Fatal("dropped a field")
				}
			}
		})
	}
}
