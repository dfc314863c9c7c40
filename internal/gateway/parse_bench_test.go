package gateway

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// benchRequest is ext/ferry/bench/http_bench.c's request: what the front spends on a
// typical head (fasthttp's parse plus checkRequest) is the budget direct mode's C parser
// is measured against.
const benchRequest = "GET /api/items?id=42&sort=desc HTTP/1.1\r\n" +
	"Host: app.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0\r\n" +
	"Accept: text/html,application/json\r\n" +
	"Accept-Encoding: gzip, br\r\n" +
	"Cookie: sid=4f2a9c1e7b\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n"

// fasthttp's parse of the head, as the server reads it off a connection's buffer.
func BenchmarkFrontParse(b *testing.B) {
	src := strings.NewReader(benchRequest)
	br := bufio.NewReaderSize(src, 4096)
	var h fasthttp.RequestHeader
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		src.Reset(benchRequest)
		br.Reset(src)
		h.Reset()
		if err := h.Read(br); err != nil {
			b.Fatal(err)
		}
	}
}

// The front's own checks on the parsed head (grammar.go, check.go).
func BenchmarkFrontCheck(b *testing.B) {
	ctx := plainCtx(b, benchRequest)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := checkRequest(ctx, 100); r != nil {
			b.Fatal(r.msg)
		}
	}
}
