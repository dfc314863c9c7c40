package gateway

import "testing"

// The usual request with cookies: a session id and a preference.
func BenchmarkEncodeRequestCookies(b *testing.B) {
	ctx := requestCtx(b, "GET / HTTP/1.1\r\nHost: 127.0.0.1:8181\r\nCookie: PHPSESSID=0123456789abcdef; theme=dark\r\n\r\n")
	uri := []byte("/")
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.SetRequestURIBytes(uri)
		buf = testHandler.encodeRequest(buf[:0], ctx, nil, nil, false, "")
	}
}

// What the Cookie header costs the hello request, which has none.
func BenchmarkRawCookieNone(b *testing.B) {
	ctx := requestCtx(b, wrkRequest)
	var buf []byte
	for b.Loop() {
		buf = rawCookie(buf[:0], ctx)
		_, _ = collectCookies(nil, buf, defaultMaxInputVars)
	}
}
