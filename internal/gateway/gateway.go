// Package gateway turns HTTP requests into worker jobs and worker answers into
// HTTP responses, with the error mapping and limits a front server owes its users.
//
// The HTTP/1.1 front is fasthttp: on this project's 2-core reference machine a
// Go-only hello world served 90-120k req/s with fasthttp against 54-75k with
// net/http (wrk -t2 -c50, same run), and the front's CPU is CPU the PHP workers
// do not get. fasthttp has no HTTP/2: h2c and TLS can come as a net/http
// listener beside it, with its own small adapters for encodeRequest and
// writeAnswer (the job format and the pool stay the same).
package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// Executor runs a job; *pool.Pool is one.
type Executor interface {
	Exec(ctx context.Context, jobCtx, body []byte) (pool.Result, error)
}

// Options tune a Handler.
type Options struct {
	Debug     bool // error details in error bodies
	AccessLog bool
	TempDir   string // for uploads; "" = os.TempDir()
	Static    *Static
	Logger    *slog.Logger
}

// Handler sends requests to the pool.
type Handler struct {
	exec Executor
	opt  Options
	log  *slog.Logger
}

// New returns a Handler sending jobs to exec.
func New(exec Executor, opt Options) *Handler {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Handler{exec: exec, opt: opt, log: opt.Logger}
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// Serve is the fasthttp request handler.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx) {
	if h.opt.AccessLog {
		start := time.Now()
		defer func() {
			h.log.Info("access", "method", string(ctx.Method()), "uri", string(ctx.RequestURI()),
				"status", ctx.Response.StatusCode(), "bytes", len(ctx.Response.Body()),
				"remote", ctx.RemoteAddr().String(), "duration", time.Since(start))
		}()
	}
	if h.opt.Static.serve(ctx) {
		return
	}
	var (
		body   = ctx.PostBody()
		form   [][2]string
		files  []upload
		parsed bool
	)
	if boundary := multipartBoundary(ctx.Request.Header.ContentType()); boundary != "" {
		var err error
		parsed = true
		form, files, err = readMultipart(body, boundary, h.opt.TempDir)
		defer removeUploads(files)
		if err != nil {
			h.fail(ctx, fasthttp.StatusBadRequest, "malformed multipart body", err)
			return
		}
		body = nil
	}
	bp := bufs.Get().(*[]byte)
	jobCtx := encodeRequest((*bp)[:0], ctx, form, files, parsed)
	res, err := h.exec.Exec(ctx, jobCtx, body)
	if cap(jobCtx) <= 64<<10 {
		*bp = jobCtx[:0]
		bufs.Put(bp)
	}
	if err != nil {
		h.execFailed(ctx, err)
		return
	}
	if err := writeAnswer(&ctx.Response, res.Context, res.Body); err != nil {
		ctx.Response.Reset()
		h.fail(ctx, fasthttp.StatusBadGateway, "the worker sent a malformed response", err)
	}
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
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The server is shutting down while the request waited for a worker.
		ctx.Response.Header.Set("Retry-After", "1")
		h.fail(ctx, fasthttp.StatusServiceUnavailable, "server shutting down, retry shortly", nil)
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

// ProtocolError answers requests fasthttp could not read, with the status that
// names the limit: 413 body, 431 headers, 408 too slow, else 400.
func ProtocolError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
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
