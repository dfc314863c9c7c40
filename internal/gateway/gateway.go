// Package gateway is the front's request path: it checks an HTTP request,
// turns it into a worker job and the worker's answer into the HTTP response,
// with the error mapping and limits a front server owes its users. How a job
// and an answer are encoded is the workers' protocol's (internal/protocol); a
// multipart body is read by internal/multipart. What needs no worker has its
// own package, which Serve calls: the static files (internal/static) and
// on-the-fly compression (internal/compress); the sockets, connections and the
// net/http shim are internal/listen's.
//
// The HTTP/1.1 front is fasthttp: on this project's 2-core reference machine a
// Go-only hello world served 90-120k req/s with fasthttp against 54-75k with
// net/http (wrk -t2 -c50, same run), and the front's CPU is CPU the PHP workers
// do not get. fasthttp has no HTTP/2: HTTPS (HTTP/1.1 and HTTP/2) and h2c are
// served by net/http beside it, whose requests enter the same Serve through
// the shim in package listen (StdServer), so each rule of the front is
// written once.
package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/compress"
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/ferryproto"
	"github.com/ferry-php/ferry/internal/static"
	"github.com/valyala/fasthttp"
)

// Executor runs a job; *pool.Pool is one.
type Executor interface {
	Exec(ctx context.Context, jobCtx, body []byte) (pool.Result, error)
}

// Options tune a Handler.
type Options struct {
	Debug          bool  // error details in error bodies
	MaxHeaders     int   // header lines per request; 431 beyond
	MaxBodySize    int64 // 413 beyond
	BodyBufferSize int64 // bodies above this are spooled to Uploads.Dir
	Uploads        multipart.Limits
	TrustedProxies []netip.Prefix
	Static         *static.Files
	// Protocol is the workers' (cmd/ferry picks it by pool.protocol): how a
	// request becomes a job and an answer a response. nil: Ferry's own.
	Protocol    protocol.Protocol
	Compression *compress.Options // nil: answers go as PHP wrote them
	// The workers' max_input_vars and max_input_nesting_level, which bound
	// $_COOKIE as the front builds it; PHP's defaults (1000, 64) when <= 0.
	MaxInputVars, MaxInputNesting int
	Logger                        *slog.Logger

	// UnderscoresInHeaders keeps header fields whose name holds "_"
	// (server.underscores_in_headers); by default they never reach PHP.
	UnderscoresInHeaders bool
}

// Handler sends requests to the pool.
type Handler struct {
	exec  Executor
	opt   Options
	proto protocol.Protocol
	log   *slog.Logger
	gz    *compress.Compressor // nil: no compression
	// writeTimeout is server.write_timeout, which a streamed answer gets per
	// part rather than for the whole stream.
	writeTimeout time.Duration
}

// New returns a Handler sending jobs to exec.
func New(exec Executor, opt Options) *Handler {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.MaxHeaders <= 0 {
		opt.MaxHeaders = 100
	}
	if opt.MaxInputVars <= 0 {
		opt.MaxInputVars = defaultMaxInputVars
	}
	if opt.MaxInputNesting <= 0 {
		opt.MaxInputNesting = defaultMaxInputNesting
	}
	if opt.MaxBodySize <= 0 {
		opt.MaxBodySize = 8 << 20
	}
	if opt.Uploads.MaxDiskBytes <= 0 {
		opt.Uploads.MaxDiskBytes = opt.MaxBodySize
	}
	if opt.Uploads.MaxFieldBytes <= 0 {
		opt.Uploads.MaxFieldBytes = opt.MaxBodySize
	}
	if opt.Uploads.MaxParts <= 0 {
		opt.Uploads.MaxParts = 1000
	}
	if opt.Uploads.MaxHeaderBytes <= 0 {
		opt.Uploads.MaxHeaderBytes = 16 << 10
	}
	if opt.Protocol == nil {
		opt.Protocol = ferryproto.Protocol{}
	}
	return &Handler{exec: exec, opt: opt, proto: opt.Protocol, log: opt.Logger, gz: compress.New(opt.Compression)}
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// Acceptable runs the request checks Serve starts with, for a front that
// must decide before Serve does: an h2c upgrade.
func (h *Handler) Acceptable(ctx *fasthttp.RequestCtx) bool {
	return checkRequest(ctx, h.opt.MaxHeaders) == nil
}

// Serve is the fasthttp request handler.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx) {
	if r := checkRequest(ctx, h.opt.MaxHeaders); r != nil {
		h.reject(ctx, r.status, r.msg)
		return
	}
	if !h.opt.UnderscoresInHeaders {
		if names := dropUnderscored(&ctx.Request.Header); names != nil {
			h.log.Debug("dropped request header fields with \"_\" in the name", "names", names, "uri", string(ctx.RequestURI()))
		}
	}
	if answerAsterisk(ctx) {
		// fasthttp leaves a streamed body unread: what is not read off the connection
		// here would be parsed as the next request (a request smuggled in the body)
		h.discardBody(ctx)
		return
	}
	if h.opt.Static.Serve(ctx) {
		h.discardBody(ctx)
		return
	}
	b, err := h.readBody(ctx)
	defer b.release()
	switch {
	case err == nil: // errors.As walks by reflection: not on every request
	case errors.Is(err, errBodyTooLarge):
		h.reject(ctx, fasthttp.StatusRequestEntityTooLarge, "request body larger than max_body_size")
		return
	case isTimeout(err):
		h.reject(ctx, fasthttp.StatusRequestTimeout, "request body not received within the read timeout")
		return
	default:
		h.reject(ctx, fasthttp.StatusBadRequest, "request body could not be read")
		h.log.Debug("request body could not be read", "uri", string(ctx.RequestURI()), "error", err)
		return
	}
	r := protocol.Request{Ctx: ctx, Front: (*protoFront)(h), Body: b.mem, BodyFile: b.file}
	if boundary := multipart.Boundary(ctx.Request.Header.ContentType()); boundary != "" && h.proto.ParsesMultipart(ctx.Request.Header.Method()) {
		r.Multipart = true
		r.Form, r.Files, err = h.multipart(&b, boundary)
		defer multipart.Remove(r.Files)
		if err != nil {
			h.uploadFailed(ctx, err)
			return
		}
	}
	bp := bufs.Get().(*[]byte)
	jobCtx, data, err := h.proto.EncodeRequest((*bp)[:0], r)
	if err != nil {
		bufs.Put(bp)
		h.fail(ctx, fasthttp.StatusInternalServerError, "request body could not be read", err)
		return
	}
	res, ok := h.execute(ctx, bp, jobCtx, data)
	if !ok {
		return
	}
	if res.Stream != nil {
		h.streamAnswer(ctx, res)
		return
	}
	h.writeFinal(ctx, res.Context, res.Body)
	res.Settle() // the file is open (or failed): the worker's spool may go
}

// execute runs one job whose context was encoded into *bp, hands the buffer
// back, and answers a failure itself (false).
func (h *Handler) execute(ctx *fasthttp.RequestCtx, bp *[]byte, jobCtx, data []byte) (pool.Result, bool) {
	gone := jobContext(ctx.Conn())
	res, err := h.exec.Exec(gone, jobCtx, data)
	gone.release()
	keepTiming(ctx, res.Timing)
	if cap(jobCtx) <= 64<<10 {
		*bp = jobCtx[:0]
		bufs.Put(bp)
	}
	if err != nil {
		h.execFailed(ctx, err)
		return res, false
	}
	return res, true
}

// uploadFailed answers a multipart body that was refused or could not be
// stored. The body has been read whole: the connection stays usable.
func (h *Handler) uploadFailed(ctx *fasthttp.RequestCtx, err error) {
	var le *multipart.LimitError
	switch {
	case errors.As(err, &le):
		h.fail(ctx, le.Status(), le.Error(), nil)
	case errors.Is(err, multipart.ErrMalformed):
		h.fail(ctx, fasthttp.StatusBadRequest, "malformed multipart body", nil)
	default:
		h.fail(ctx, fasthttp.StatusInternalServerError, "uploads could not be stored", err)
	}
}

func (h *Handler) multipart(b *body, boundary string) ([][2]string, []multipart.Upload, error) {
	r, done, err := b.reader()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	return multipart.Read(r, boundary, h.opt.Uploads)
}

// discardBody reads what a request answered without PHP still carries, so
// the connection stays usable; a body too large to drain closes it instead.
func (h *Handler) discardBody(ctx *fasthttp.RequestCtx) {
	src := ctx.RequestBodyStream()
	if src == nil {
		return
	}
	// A body that could not be read to its end leaves the connection where the next
	// request's start is unknown: it is closed.
	if n, err := io.Copy(io.Discard, io.LimitReader(src, h.opt.MaxBodySize+1)); err != nil || n > h.opt.MaxBodySize {
		ctx.SetConnectionClose()
	}
}

// reject answers a request PHP never sees and closes the connection, lingering
// so the answer is read before the unread request bytes reset it.
func (h *Handler) reject(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.SetConnectionClose()
	if c, ok := ctx.Conn().(*conn); ok {
		c.Linger()
	}
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBodyString(msg + "\n")
}

// execFailed maps pool errors to statuses: the client learns whether to retry.
func (h *Handler) execFailed(ctx *fasthttp.RequestCtx, err error) {
	var je *pool.JobError
	switch {
	case errors.Is(err, pool.ErrCrashed):
		h.fail(ctx, fasthttp.StatusBadGateway, "the worker died while handling the request", err)
	case errors.Is(err, pool.ErrExecTimeout):
		h.fail(ctx, fasthttp.StatusGatewayTimeout, "the request exceeded exec_ttl", err)
	case errors.Is(err, pool.ErrNoWorker), errors.Is(err, pool.ErrQueueFull), errors.Is(err, pool.ErrClosed):
		ctx.Response.Header.Set("Retry-After", "1")
		h.fail(ctx, fasthttp.StatusServiceUnavailable, "no worker available, retry shortly", err)
	case errors.Is(err, context.Canceled):
		// The client closed its connection while the job waited for a
		// worker: the job was dropped and nobody reads an answer (nginx's 499).
		ctx.SetConnectionClose()
		h.fail(ctx, 499, "client closed the request", nil)
	case errors.As(err, &je):
		h.fail(ctx, fasthttp.StatusInternalServerError, "internal server error", err)
	default:
		h.fail(ctx, fasthttp.StatusInternalServerError, "internal server error", err)
	}
}

func (h *Handler) fail(ctx *fasthttp.RequestCtx, status int, msg string, err error) {
	if err != nil {
		h.log.Warn(msg, "status", status, "uri", string(ctx.RequestURI()), "error", err)
	}
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetStatusCode(status)
	body := msg
	if h.opt.Debug && err != nil {
		body += "\n\n" + err.Error()
	}
	ctx.SetBodyString(body + "\n")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ProtocolError answers requests fasthttp could not read, with the status that
// names the limit: 413 body, 431 headers, 408 too slow, else 400.
func ProtocolError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	if c, ok := ctx.Conn().(*conn); ok {
		// The request was not read to its end: let the answer through
		// before the unread bytes make the close a reset.
		c.Linger()
	}
	switch {
	case errors.Is(err, listen.ErrMalformedHeader):
		ctx.Error("malformed HTTP request: a header line without a colon\n", fasthttp.StatusBadRequest)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("request body larger than max_body_size\n", fasthttp.StatusRequestEntityTooLarge)
	case errors.As(err, &small):
		ctx.Error("request headers larger than max_header_size\n", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("request not received within the read timeout\n", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("malformed HTTP request\n", fasthttp.StatusBadRequest)
	}
}
