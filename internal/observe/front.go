package observe

import (
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// FrontOptions choose what Front does around each request; each part costs
// nothing when off.
type FrontOptions struct {
	Metrics    *Metrics   // nil: no request metrics
	RequestIDs bool       // keep or make an X-Request-Id, pass it to PHP, echo it
	AccessLog  *AccessLog // nil: no access log
	Tracing    *Tracing   // nil: no spans
	// Timing reads the request's job timing (gateway.JobTiming).
	Timing func(*fasthttp.RequestCtx) pool.Timing
}

// Front wraps the gateway's handler with request ids, metrics and the access log.
type Front struct {
	next fasthttp.RequestHandler
	opt  FrontOptions
	ids  *ids
}

// NewFront wraps next; with nothing to do it returns next itself.
func NewFront(next fasthttp.RequestHandler, opt FrontOptions) fasthttp.RequestHandler {
	if opt.Metrics == nil && !opt.RequestIDs && opt.AccessLog == nil && opt.Tracing == nil {
		return next
	}
	f := &Front{next: next, opt: opt}
	if opt.RequestIDs {
		f.ids = newIDs()
	}
	return f.Serve
}

// Serve is a fasthttp.RequestHandler.
func (f *Front) Serve(ctx *fasthttp.RequestCtx) {
	// fasthttp read the clock as the headers arrived: one read less.
	start := ctx.Time()
	if start.IsZero() {
		start = time.Now()
	}
	if f.ids != nil {
		f.requestID(ctx)
		// Set now too: an HTTP/1.0 streamed answer writes its head before the handler
		// returns (internal/gateway/stream.go), and would go without it.
		ctx.Response.Header.SetCanonical(requestIDKey, ctx.Request.Header.PeekBytes(requestIDKey))
	}
	var span *traceSpan
	if f.opt.Tracing != nil {
		span = f.opt.Tracing.start(ctx, start)
	}
	f.next(ctx)
	var id []byte
	if f.ids != nil {
		// Read back rather than kept from before: the handler may edit the
		// request's headers, which moves their bytes.
		id = ctx.Request.Header.PeekBytes(requestIDKey)
		ctx.Response.Header.SetCanonical(requestIDKey, id)
	}
	d := time.Since(start)
	// A streamed body (a file answer, a static file) declares its length;
	// Body() would read it.
	var out int64
	if ctx.Response.IsBodyStream() {
		out = max(int64(ctx.Response.Header.ContentLength()), 0)
	} else {
		out = int64(len(ctx.Response.Body()))
	}
	if ctx.IsHead() {
		out = 0
	}
	if f.opt.Metrics != nil {
		f.opt.Metrics.request(ctx.Method(), ctx.Response.StatusCode(), int64(ctx.Request.Header.ContentLength()), out, d)
	}
	if f.opt.AccessLog == nil && span == nil {
		return
	}
	var job pool.Timing
	if f.opt.Timing != nil {
		job = f.opt.Timing(ctx)
	}
	if span != nil {
		f.opt.Tracing.end(span, ctx, start.Add(d), job)
	}
	if f.opt.AccessLog != nil {
		e := entry{ctx: ctx, id: id, start: start, duration: d, bytes: out, job: job}
		f.opt.AccessLog.write(&e)
	}
}

// requestID leaves a valid X-Request-Id on the request, the client's or a new
// one, so that PHP sees it either way.
func (f *Front) requestID(ctx *fasthttp.RequestCtx) {
	if validRequestID(ctx.Request.Header.PeekBytes(requestIDKey)) {
		return
	}
	// fasthttp copies the value, but the compiler cannot see it: a buffer
	// on the stack would move to the heap on every request.
	bp := idBufs.Get().(*[]byte)
	*bp = f.ids.next((*bp)[:0])
	ctx.Request.Header.SetCanonical(requestIDKey, *bp)
	idBufs.Put(bp)
}

// requestIDKey is RequestIDHeader as fasthttp normalizes it, so that setting
// it skips the normalizing.
var requestIDKey = []byte("X-Request-Id")

var idBufs = sync.Pool{New: func() any { b := make([]byte, 0, 40); return &b }}
