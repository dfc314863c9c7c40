// Package compress compresses PHP's answers on the fly for clients that
// accept it (server.compression): br, zstd or gzip by the client's
// Accept-Encoding weights and the server's order, for the media types
// configured, whole answers in place and streamed ones part by part, each
// part flushed. It also reads Accept-Encoding for the static files'
// precompressed siblings (AcceptQ). It needs no worker; the gateway calls it
// on the answers it has.
package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

// Options say which PHP answers are compressed and how.
type Options struct {
	MinSize    int      // bodies shorter than this go as they are: the headers would eat the gain
	Types      []string // media types ("text/*" matches a whole family; parameters ignored)
	Algorithms []string // in the server's order of preference: br, zstd, gzip
}

// DefaultCompressibleTypes are text formats; images, video, archives and fonts
// other than SVG are compressed already.
var DefaultCompressibleTypes = []string{
	"text/*", "application/json", "application/*+json", "application/javascript",
	"application/xml", "application/*+xml", "application/x-ndjson", "image/svg+xml",
	"application/wasm", "application/manifest+json",
}

// encoder compresses one body into w, or opens a writer for a streamed one;
// each kind keeps its writers pooled, since allocating their windows costs
// more than compressing a small page.
type encoder struct {
	name   string
	encode func(w io.Writer, body []byte) error
	open   func(w io.Writer) (flushWriter, func())
}

// flushWriter is a streaming compressor: Flush sends out everything written
// so far, decodable on its own, so that no part of a stream is held back.
type flushWriter interface {
	io.Writer
	Flush() error
	Close() error
}

// A stream is flushed after each part, often a small one (an event). klauspost's
// gzip at any level and brotli below level 3 then start each part afresh and grow
// it; the standard library's gzip from level 2 and brotli 3 keep matching against
// earlier parts, shrink an event stream 5x and cost no more per part (measured on
// 75-byte events, docs/config.md).
var (
	gzipPool         = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, 1); return w }}
	brotliPool       = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 1) }}
	gzipStreamPool   = sync.Pool{New: func() any { w, _ := stdgzip.NewWriterLevel(nil, 2); return w }}
	brotliStreamPool = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 3) }}
	zstdStreamPool   = sync.Pool{New: func() any {
		w, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		return w
	}}
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
)

// pooled opens a writer from a pool; the release func resets it to write
// nowhere first, so the pool keeps no reference to a finished response.
func pooled[W interface {
	flushWriter
	Reset(io.Writer)
}](p *sync.Pool) func(io.Writer) (flushWriter, func()) {
	return func(w io.Writer) (flushWriter, func()) {
		z := p.Get().(W)
		z.Reset(w)
		return z, func() { z.Reset(io.Discard); p.Put(z) }
	}
}

var encoders = map[string]encoder{
	"gzip": {"gzip", func(w io.Writer, body []byte) error {
		z := gzipPool.Get().(*gzip.Writer)
		defer gzipPool.Put(z)
		z.Reset(w)
		if _, err := z.Write(body); err != nil {
			return err
		}
		return z.Close()
	}, pooled[*stdgzip.Writer](&gzipStreamPool)},
	"br": {"br", func(w io.Writer, body []byte) error {
		z := brotliPool.Get().(*brotli.Writer)
		defer brotliPool.Put(z)
		z.Reset(w)
		if _, err := z.Write(body); err != nil {
			return err
		}
		return z.Close()
	}, pooled[*brotli.Writer](&brotliStreamPool)},
	"zstd": {"zstd", func(w io.Writer, body []byte) error {
		zstdOnce.Do(func() {
			// EncodeAll is safe for concurrent use; one encoder serves every request.
			zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		})
		_, err := w.Write(zstdEnc.EncodeAll(body, nil))
		return err
	}, pooled[*zstd.Encoder](&zstdStreamPool)},
}

// Compressor applies Options to answers.
type Compressor struct {
	min      int
	exact    map[string]bool
	prefixes []string // "text/" for "text/*"
	suffixes []string // "+json" for "application/*+json"
	algos    []encoder
}

// New returns the Compressor for c, or nil when c compresses nothing.
func New(c *Options) *Compressor {
	if c == nil || len(c.Algorithms) == 0 {
		return nil
	}
	k := &Compressor{min: c.MinSize, exact: map[string]bool{}}
	for _, a := range c.Algorithms {
		if e, ok := encoders[a]; ok {
			k.algos = append(k.algos, e)
		}
	}
	types := c.Types
	if len(types) == 0 {
		types = DefaultCompressibleTypes
	}
	for _, t := range types {
		t = strings.ToLower(strings.TrimSpace(t))
		switch {
		case strings.HasSuffix(t, "/*"):
			k.prefixes = append(k.prefixes, strings.TrimSuffix(t, "*"))
		case strings.Contains(t, "/*+"):
			k.suffixes = append(k.suffixes, t[strings.Index(t, "*")+1:])
		default:
			k.exact[t] = true
		}
	}
	return k
}

// Apply compresses the response body in place when the client accepts an
// encoding, the body is large enough, of a compressible type, not encoded
// already, and comes out smaller.
func (k *Compressor) Apply(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	body := resp.Body()
	if len(body) < k.min || len(body) == 0 || ctx.IsHead() {
		return
	}
	e := k.negotiate(ctx)
	if e == nil {
		return
	}
	// Into fasthttp's own pooled buffer; body still points at the answer's memory.
	resp.ResetBody()
	if err := e.encode(resp.BodyWriter(), body); err != nil || len(resp.Body()) >= len(body) {
		resp.SetBodyRaw(body)
		return
	}
	encoded(&resp.Header, e)
}

// negotiate picks the encoding for the response whose head is in ctx, or nil
// when it goes as it is; the size of the body is the caller's business.
func (k *Compressor) negotiate(ctx *fasthttp.RequestCtx) *encoder {
	resp := &ctx.Response
	status := resp.StatusCode()
	if status < 200 || status == fasthttp.StatusNoContent || status == fasthttp.StatusPartialContent || status == fasthttp.StatusNotModified {
		return nil
	}
	h := &resp.Header
	if len(h.ContentEncoding()) > 0 || len(h.Peek(fasthttp.HeaderContentRange)) > 0 || !k.compressible(h.ContentType()) {
		return nil
	}
	// The choice depends on Accept-Encoding from here on, whatever it is.
	addVary(h)
	return k.choose(ctx.Request.Header.Peek(fasthttp.HeaderAcceptEncoding))
}

// encoded marks a head whose body e encodes.
func encoded(h *fasthttp.ResponseHeader, e *encoder) {
	h.SetContentEncoding(e.name)
	if etag := h.Peek(fasthttp.HeaderETag); len(etag) > 0 && !bytes.HasPrefix(etag, []byte("W/")) {
		// Another byte sequence: a strong validator no longer describes it.
		h.Set(fasthttp.HeaderETag, "W/"+string(etag))
	}
}

func (k *Compressor) compressible(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	t := strings.ToLower(strings.TrimSpace(string(ct)))
	if t == "" {
		return false
	}
	if k.exact[t] {
		return true
	}
	for _, p := range k.prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	for _, s := range k.suffixes {
		if strings.HasSuffix(t, s) {
			return true
		}
	}
	return false
}

// choose picks the encoding with the client's highest q-value (RFC 9110
// 12.5.3), the server's order breaking ties; q=0 refuses one, "*" stands for
// any not named.
func (k *Compressor) choose(accept []byte) *encoder {
	if len(accept) == 0 {
		return nil
	}
	var best *encoder
	bestQ := 0
	for i := range k.algos {
		alias := ""
		if k.algos[i].name == "gzip" {
			alias = "x-gzip"
		}
		q := AcceptQ(accept, k.algos[i].name, alias)
		if q > bestQ {
			best, bestQ = &k.algos[i], q
		}
	}
	return best
}

func addVary(h *fasthttp.ResponseHeader) {
	v := h.Peek(fasthttp.HeaderVary)
	if len(v) == 0 {
		h.Set(fasthttp.HeaderVary, "Accept-Encoding")
		return
	}
	for _, f := range strings.Split(string(v), ",") {
		f = strings.TrimSpace(f)
		if f == "*" || strings.EqualFold(f, "Accept-Encoding") {
			return
		}
	}
	h.Set(fasthttp.HeaderVary, string(v)+", Accept-Encoding")
}
