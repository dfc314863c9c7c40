// Package gateway turns HTTP requests into worker jobs and worker answers into
// HTTP responses, with the error mapping and limits a front server owes its users.
package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
)

// Executor runs a job; *pool.Pool is one. Swappable so a reload can replace it.
type Executor interface {
	Exec(ctx context.Context, jobCtx, body []byte) (pool.Result, error)
}

// Options tune a Handler.
type Options struct {
	MaxBodySize int64
	Debug       bool // error details in 500 bodies
	AccessLog   bool
	TempDir     string // for uploads; "" = os.TempDir()
	Static      *Static
	Logger      *slog.Logger
}

// Handler is the http.Handler in front of the pool.
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
	if opt.MaxBodySize <= 0 {
		opt.MaxBodySize = 8 << 20
	}
	return &Handler{exec: exec, opt: opt, log: opt.Logger}
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if h.opt.AccessLog {
		start = time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		w = rec
		defer func() {
			h.log.Info("access", "method", r.Method, "uri", r.RequestURI, "status", rec.status,
				"bytes", rec.bytes, "remote", r.RemoteAddr, "duration", time.Since(start))
		}()
	}
	if h.opt.Static.serve(w, r) {
		return
	}
	if r.ContentLength > h.opt.MaxBodySize {
		h.fail(w, http.StatusRequestEntityTooLarge, "request body larger than max_body_size", nil)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.opt.MaxBodySize)

	var (
		body   []byte
		form   [][2]string
		files  []upload
		parsed bool
		err    error
	)
	if isMultipart(r) {
		parsed = true
		form, files, err = readMultipart(r, h.opt.TempDir)
		defer removeUploads(files)
	} else if r.ContentLength != 0 {
		body, err = readBody(r)
	}
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			h.fail(w, http.StatusRequestEntityTooLarge, "request body larger than max_body_size", nil)
		} else {
			h.fail(w, http.StatusBadRequest, "cannot read the request body", err)
		}
		return
	}

	bp := bufs.Get().(*[]byte)
	jobCtx := encodeRequest((*bp)[:0], r, form, files, parsed)
	res, err := h.exec.Exec(r.Context(), jobCtx, body)
	if cap(jobCtx) <= 64<<10 {
		*bp = jobCtx[:0]
		bufs.Put(bp)
	}
	if err != nil {
		h.execFailed(w, r, err)
		return
	}
	if err := writeAnswer(w, res.Context, res.Body); err != nil {
		h.fail(w, http.StatusBadGateway, "the worker sent a malformed response", err)
	}
}

func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > 0 {
		b := make([]byte, r.ContentLength)
		_, err := io.ReadFull(r.Body, b)
		return b, err
	}
	return io.ReadAll(r.Body)
}

// execFailed maps pool errors to statuses: the client learns whether to retry.
func (h *Handler) execFailed(w http.ResponseWriter, r *http.Request, err error) {
	var je *pool.JobError
	switch {
	case errors.Is(err, pool.ErrCrashed):
		h.fail(w, http.StatusBadGateway, "the worker died while handling the request", err)
	case errors.Is(err, pool.ErrExecTimeout):
		h.fail(w, http.StatusGatewayTimeout, "the request exceeded exec_ttl", err)
	case errors.Is(err, pool.ErrNoWorker), errors.Is(err, pool.ErrQueueFull), errors.Is(err, pool.ErrClosed):
		w.Header().Set("Retry-After", "1")
		h.fail(w, http.StatusServiceUnavailable, "no worker available, retry shortly", err)
	case errors.As(err, &je):
		h.fail(w, http.StatusInternalServerError, "internal server error", err)
	case errors.Is(err, context.Canceled):
		// the client went away; nobody reads the answer
	default:
		h.fail(w, http.StatusInternalServerError, "internal server error", err)
	}
}

func (h *Handler) fail(w http.ResponseWriter, status int, msg string, err error) {
	if err != nil {
		h.log.Warn(msg, "status", status, "error", err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	var b strings.Builder
	b.WriteString(msg)
	if h.opt.Debug && err != nil {
		b.WriteString("\n\n" + err.Error())
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(c int) { s.status = c; s.ResponseWriter.WriteHeader(c) }
func (s *statusRecorder) Write(b []byte) (int, error) {
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}
