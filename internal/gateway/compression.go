package gateway

import (
	"io"

	"github.com/ferry-php/ferry/internal/compress"
	"github.com/valyala/fasthttp"
)

// compressor is compress.Compressor as the request path calls it: on an
// answer in ctx.Response, or on a streamed one, part by part.
type compressor struct{ *compress.Compressor }

func newCompressor(o *compress.Options) *compressor {
	k := compress.New(o)
	if k == nil {
		return nil
	}
	return &compressor{k}
}

func (k *compressor) apply(ctx *fasthttp.RequestCtx) { k.Apply(ctx) }

func (k *compressor) stream(ctx *fasthttp.RequestCtx, src *streamBody) io.ReadCloser {
	if z := k.Stream(ctx, streamParts{src}); z != nil {
		return z
	}
	return src
}

// streamParts is a streamed answer as compress reads it, part by part.
type streamParts struct{ *streamBody }

func (p streamParts) Part() ([]byte, error) { return p.part() }
