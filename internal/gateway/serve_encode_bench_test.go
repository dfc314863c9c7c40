package gateway

import (
	"context"
	"testing"

	"github.com/ferry-php/ferry/internal/pool"
)

// answering stands in for the pool with one fixed answer, so that a benchmark
// measures the front alone: the request's encoding, the call through the
// worker protocol and the answer's decoding.
type answering struct{ res pool.Result }

func (a answering) Exec(context.Context, []byte, []byte) (pool.Result, error) { return a.res, nil }

// BenchmarkServe is one request through Serve, as wrk sends it, answered as
// php/worker answers hello world.
func BenchmarkServe(b *testing.B) {
	h := New(answering{pool.Result{
		Context: []byte(`{"status":200,"headers":{"Content-Type":["text\/plain"],"X-Powered-By":["Ferry"]}}`),
		Body:    []byte("Hello, World!"),
	}}, Options{})
	ctx := requestCtx(b, wrkRequest)
	uri := []byte("/")
	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.SetRequestURIBytes(uri)
		ctx.Response.Reset()
		h.Serve(ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
