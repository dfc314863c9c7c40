// Package static serves files from a directory before requests reach PHP,
// as nginx's try_files does: names resolved beneath the docroot by the
// kernel, validators and conditional requests, single byte ranges, and
// precompressed siblings. It needs no worker; the gateway asks it first and
// hands PHP what it does not answer. Its FileBody is also how the gateway
// sends a file a worker names as its answer.
package static

import (
	"bytes"
	"errors"
	"io"
	"math"
	"mime"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ferry-php/ferry/internal/compress"
	"github.com/valyala/fasthttp"
)

// Files serves files from a directory before requests reach PHP, like nginx's
// try_files: a path that names no regular file it may serve falls through to
// the workers.
//
// The request path is the one fasthttp has already percent-decoded and cleaned
// of "." and ".." segments; it is used as a file name and never parsed as a URI
// again, so a name containing "?", "#" or "%" is served by that very name. The
// kernel resolves it beneath a handle on Dir, opened on the first request and
// kept (a Dir later replaced by another directory, as a deploy that swaps a
// symlink does, needs a restart to be seen). Symlinks are followed only while
// they stay beneath Dir: an absolute target or one that climbs out is refused,
// a relative one to another file of the docroot is served. Files are opened
// afresh for every request, so a file changed in place is served as it is now.
//
// Prefix matches whole path segments: "/static" covers "/static/x", never
// "/staticx". Dotfiles fall through, except the ".well-known" directory at
// the top of Dir (RFC 8615). Directories fall through; nothing is listed.
// Forbid is matched against the requested name (and a sibling's), not against
// what a symlink points to.
//
// A client that accepts br or gzip gets "name.br" or "name.gz" instead of
// "name" when that sibling exists as a regular file, with the original's
// Content-Type; every response says Vary: Accept-Encoding. Nothing is
// compressed on the fly and nothing is ever written into Dir. Ranges of such a
// response are ranges of the compressed bytes, which is what its ETag names.
// Only single ranges are served; a multi-range request gets the whole file.
type Files struct {
	Dir          string
	Prefix       string
	Forbid       []string // suffixes never served (e.g. ".php")
	CacheControl string

	mu   sync.Mutex
	root atomic.Pointer[staticRoot]
	walk bool // resolve with os.Root even where openat2 works, to test that path
}

var errNotRegular = errors.New("not a regular file")

// Serve answers the request from Dir and reports whether it did; a request
// it does not answer is left untouched for PHP.
func (s *Files) Serve(ctx *fasthttp.RequestCtx) bool {
	if s == nil || s.Dir == "" || !(ctx.IsGet() || ctx.IsHead()) {
		return false
	}
	rel, ok := s.relative(ctx.Path())
	if !ok || s.forbidden(rel) {
		return false
	}
	root := s.docroot()
	if root == nil {
		return false
	}
	f, meta, err := root.open(rel)
	if err != nil {
		return false
	}
	enc := ""
	if ae := ctx.Request.Header.Peek(fasthttp.HeaderAcceptEncoding); len(ae) > 0 {
		if vf, vmeta, venc := s.precompressed(root, rel, ae); vf != nil {
			f.Close()
			f, meta, enc = vf, vmeta, venc
		}
	}
	s.respond(ctx, f, meta, rel, enc)
	return true
}

// relative maps a request path to a name beneath Dir, or says it is not one
// Files may serve.
func (s *Files) relative(p []byte) (string, bool) {
	prefix := strings.TrimSuffix(s.Prefix, "/")
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return "", false
	}
	rest := p[len(prefix):]
	// "/static" alone and "/static/" name the directory itself.
	if len(rest) < 2 || rest[0] != '/' || bytes.IndexByte(rest, 0) >= 0 {
		return "", false
	}
	rest = rest[1:]
	for i, seg := 0, rest; ; i++ {
		end := bytes.IndexByte(seg, '/')
		name := seg
		if end >= 0 {
			name = seg[:end]
		}
		// An empty segment is a trailing slash, a directory. A leading dot
		// covers "." and "..", which fasthttp should have removed already.
		if len(name) == 0 || name[0] == '.' && (i > 0 || string(name) != ".well-known") {
			return "", false
		}
		if end < 0 {
			break
		}
		seg = seg[end+1:]
	}
	return string(rest), true
}

func (s *Files) forbidden(name string) bool {
	for _, suf := range s.Forbid {
		if len(name) >= len(suf) && strings.EqualFold(name[len(name)-len(suf):], suf) {
			return true
		}
	}
	return false
}

func (s *Files) docroot() *staticRoot {
	if r := s.root.Load(); r != nil {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.root.Load(); r != nil {
		return r
	}
	// A failure is not remembered: the next request tries again.
	r, err := openStaticRoot(s.Dir, s.walk)
	if err != nil {
		return nil
	}
	s.root.Store(r)
	return r
}

// precompressed opens the sibling the client prefers among those it accepts.
func (s *Files) precompressed(root *staticRoot, rel string, ae []byte) (*os.File, fileMeta, string) {
	br, gz := compress.AcceptQ(ae, "br", ""), compress.AcceptQ(ae, "gzip", "x-gzip")
	order := [2]struct {
		q        int
		enc, suf string
	}{{br, "br", ".br"}, {gz, "gzip", ".gz"}}
	if gz > br {
		order[0], order[1] = order[1], order[0]
	}
	for _, o := range order {
		if o.q <= 0 || s.forbidden(rel+o.suf) {
			continue
		}
		if f, meta, err := root.open(rel + o.suf); err == nil {
			return f, meta, o.enc
		}
	}
	return nil, fileMeta{}, ""
}

func (s *Files) respond(ctx *fasthttp.RequestCtx, f *os.File, meta fileMeta, rel, enc string) {
	h := &ctx.Response.Header
	etag := meta.etag(enc)
	h.Set(fasthttp.HeaderVary, fasthttp.HeaderAcceptEncoding)
	h.Set(fasthttp.HeaderAcceptRanges, "bytes")
	h.Set(fasthttp.HeaderETag, etag)
	h.SetLastModified(meta.mtime)
	if s.CacheControl != "" {
		h.Set(fasthttp.HeaderCacheControl, s.CacheControl)
	}
	if status := preconditions(&ctx.Request.Header, etag, meta.mtime); status != 0 {
		f.Close()
		ctx.SetStatusCode(status)
		return
	}
	start, n := int64(0), meta.size
	if ctx.IsGet() { // RFC 9110 defines no ranges for HEAD
		var status int
		start, n, status = byteRange(&ctx.Request.Header, etag, meta)
		switch status {
		case fasthttp.StatusRequestedRangeNotSatisfiable:
			f.Close()
			h.Set(fasthttp.HeaderContentRange, "bytes */"+strconv.FormatInt(meta.size, 10))
			ctx.SetStatusCode(status)
			return
		case fasthttp.StatusPartialContent:
			if _, err := f.Seek(start, io.SeekStart); err != nil {
				f.Close()
				ctx.Error("cannot read the file", fasthttp.StatusInternalServerError)
				return
			}
			h.Set(fasthttp.HeaderContentRange, "bytes "+strconv.FormatInt(start, 10)+"-"+
				strconv.FormatInt(start+n-1, 10)+"/"+strconv.FormatInt(meta.size, 10))
			ctx.SetStatusCode(status)
		}
	}
	h.SetContentType(contentType(rel))
	if enc != "" {
		h.SetContentEncoding(enc)
	}
	if n > math.MaxInt {
		f.Close()
		ctx.Error("file too large", fasthttp.StatusInternalServerError)
		return
	}
	if ctx.IsHead() {
		f.Close()
		h.SetContentLength(int(n))
		return
	}
	// fasthttp writes Content-Length bytes of the stream, then closes it.
	ctx.Response.SetBodyStream(NewFileBody(f, n), int(n))
}

func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// FileBody gives fasthttp exactly the bytes announced, even if the file grew
// since it was measured, and closes the file once fasthttp is done with it.
// Its WriteTo hands the limited *os.File to the writer's ReadFrom, where
// bufio.Writer and then *net.TCPConn turn it into sendfile(2).
type FileBody struct {
	f  *os.File
	lr io.LimitedReader
}

// NewFileBody sends n bytes of f from its current offset, and closes f.
func NewFileBody(f *os.File, n int64) *FileBody {
	return &FileBody{f: f, lr: io.LimitedReader{R: f, N: n}}
}

func (b *FileBody) Read(p []byte) (int, error) { return b.lr.Read(p) }

func (b *FileBody) WriteTo(w io.Writer) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return rf.ReadFrom(&b.lr)
	}
	return io.Copy(w, &b.lr)
}

func (b *FileBody) Close() error { return b.f.Close() }
