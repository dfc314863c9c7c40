package gateway

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

// Compression says which PHP answers are compressed and how.
type Compression struct {
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

// encoder compresses one body into w; each kind keeps its writers pooled, since
// allocating their windows costs more than compressing a small page.
type encoder struct {
	name   string
	encode func(w io.Writer, body []byte) error
}

var (
	gzipPool   = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, 1); return w }}
	brotliPool = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 1) }}
	zstdOnce   sync.Once
	zstdEnc    *zstd.Encoder
)

var encoders = map[string]encoder{
	"gzip": {"gzip", func(w io.Writer, body []byte) error {
		z := gzipPool.Get().(*gzip.Writer)
		defer gzipPool.Put(z)
		z.Reset(w)
		if _, err := z.Write(body); err != nil {
			return err
		}
		return z.Close()
	}},
	"br": {"br", func(w io.Writer, body []byte) error {
		z := brotliPool.Get().(*brotli.Writer)
		defer brotliPool.Put(z)
		z.Reset(w)
		if _, err := z.Write(body); err != nil {
			return err
		}
		return z.Close()
	}},
	"zstd": {"zstd", func(w io.Writer, body []byte) error {
		zstdOnce.Do(func() {
			// EncodeAll is safe for concurrent use; one encoder serves every request.
			zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		})
		_, err := w.Write(zstdEnc.EncodeAll(body, nil))
		return err
	}},
}

// compressor applies a Compression to answers.
type compressor struct {
	min      int
	exact    map[string]bool
	prefixes []string // "text/" for "text/*"
	suffixes []string // "+json" for "application/*+json"
	algos    []encoder
}

func newCompressor(c *Compression) *compressor {
	if c == nil || len(c.Algorithms) == 0 {
		return nil
	}
	k := &compressor{min: c.MinSize, exact: map[string]bool{}}
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

// apply compresses the response body in place when the client accepts an
// encoding, the body is large enough, of a compressible type, not encoded
// already, and comes out smaller.
func (k *compressor) apply(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	body := resp.Body()
	if len(body) < k.min || len(body) == 0 || ctx.IsHead() {
		return
	}
	status := resp.StatusCode()
	if status < 200 || status == fasthttp.StatusNoContent || status == fasthttp.StatusPartialContent || status == fasthttp.StatusNotModified {
		return
	}
	h := &resp.Header
	if len(h.ContentEncoding()) > 0 || len(h.Peek(fasthttp.HeaderContentRange)) > 0 || !k.compressible(h.ContentType()) {
		return
	}
	// The choice depends on Accept-Encoding from here on, whatever it is.
	addVary(h)
	e := k.choose(ctx.Request.Header.Peek(fasthttp.HeaderAcceptEncoding))
	if e == nil {
		return
	}
	// Into fasthttp's own pooled buffer; body still points at the answer's memory.
	resp.ResetBody()
	if err := e.encode(resp.BodyWriter(), body); err != nil || len(resp.Body()) >= len(body) {
		resp.SetBodyRaw(body)
		return
	}
	h.SetContentEncoding(e.name)
	if etag := h.Peek(fasthttp.HeaderETag); len(etag) > 0 && !bytes.HasPrefix(etag, []byte("W/")) {
		// Another byte sequence: a strong validator no longer describes it.
		h.Set(fasthttp.HeaderETag, "W/"+string(etag))
	}
}

func (k *compressor) compressible(ct []byte) bool {
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
func (k *compressor) choose(accept []byte) *encoder {
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
		q := acceptQ(accept, k.algos[i].name, alias)
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
