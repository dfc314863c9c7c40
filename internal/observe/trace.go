package observe

import (
	"context"
	"encoding/binary"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/ferry-php/ferry/internal/observe/otlp"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// Tracing makes an OpenTelemetry span per request, exported over OTLP/HTTP
// in batches, and hands PHP a W3C traceparent naming that span, so the
// spans PHP makes join the client's trace under it.
type Tracing struct {
	exp *otlp.Exporter
	// bound is the sampling threshold on a new trace id's last 63 bits:
	// the OpenTelemetry TraceIdRatioBased rule, so that every service
	// using the same ratio keeps the same traces.
	bound  uint64
	always bool
}

// NewTracing exports to endpoint, an OTLP/HTTP traces URL such as
// http://127.0.0.1:4318/v1/traces. ratio is the share of traces started
// here that are kept; a client's sampling decision is followed. The
// OTEL_BSP_*, OTEL_EXPORTER_OTLP_* and OTEL_RESOURCE_ATTRIBUTES variables
// tune it as they tuned the OpenTelemetry SDK.
func NewTracing(endpoint, service string, ratio float64, log *slog.Logger) (*Tracing, error) {
	cfg, warnings := otlp.FromEnv(endpoint, os.Getenv)
	res, err := otlp.ParsePairs(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		warnings = append(warnings, "OTEL_RESOURCE_ATTRIBUTES: "+err.Error())
	}
	for _, w := range warnings {
		log.Warn("tracing: " + w)
	}
	// server.tracing.service_name wins over the environment's.
	res["service.name"] = service
	attrs := make([]otlp.KeyValue, 0, len(res))
	// Sorted by key, as the SDK's attribute sets are.
	for _, k := range slices.Sorted(maps.Keys(res)) {
		attrs = append(attrs, otlp.String(k, res[k]))
	}
	t := &Tracing{exp: otlp.NewExporter(cfg, attrs, "ferry", log)}
	switch {
	case ratio >= 1:
		t.always = true
	case ratio > 0:
		t.bound = uint64(ratio * (1 << 63))
	}
	return t, nil
}

// Shutdown sends the spans still buffered.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.exp.Shutdown(ctx) }

// traceSpan is a request's span while it runs; nil when the trace is not kept.
type traceSpan = otlp.Span

// start gives the request a span context, as a child of the client's
// traceparent if it sent a valid one, and puts its traceparent on the
// request. It returns the span to end, or nil when the trace is not sampled:
// PHP still gets a traceparent, flagged not sampled.
func (t *Tracing) start(ctx *fasthttp.RequestCtx, at time.Time) *traceSpan {
	h := &ctx.Request.Header
	parent, remote := parseTraceparent(string(h.Peek("Traceparent")))
	sc := spanContext{traceID: parent.traceID, flags: parent.flags}
	if !remote {
		sc.traceID = newTraceID()
	}
	sc.spanID = newSpanID()
	var keep bool
	if remote {
		keep = parent.flags&flagSampled != 0
	} else {
		keep = t.always || binary.BigEndian.Uint64(sc.traceID[8:])>>1 < t.bound
	}
	if keep {
		sc.flags |= flagSampled
	} else {
		sc.flags &^= flagSampled
	}
	var state string
	if remote {
		state = normalTracestate(string(h.Peek("Tracestate")))
	}
	// A client's tracestate is its own; the traceparent is always ours.
	h.Del("Traceparent")
	var buf [55]byte
	h.SetBytesV("Traceparent", appendTraceparent(buf[:0], sc))
	if state != "" {
		h.Set("Tracestate", state)
	}
	if !keep {
		return nil
	}
	s := &traceSpan{TraceID: sc.traceID, SpanID: sc.spanID, TraceState: state,
		Flags: uint32(sc.flags) | otlp.FlagHasIsRemote,
		Name:  otlp.ValidUTF8(string(ctx.Method())), Kind: otlp.KindServer, Start: at.UnixNano()}
	if remote {
		s.ParentID = parent.spanID
		s.Flags |= otlp.FlagIsRemote
	}
	s.Attrs = make([]otlp.KeyValue, 4, 8)
	s.Attrs[0] = otlp.String("http.request.method", s.Name)
	s.Attrs[1] = otlp.String("url.path", string(ctx.Path()))
	s.Attrs[2] = otlp.String("network.protocol.version", string(h.Protocol()))
	s.Attrs[3] = otlp.String("client.address", ctx.RemoteIP().String())
	return s
}

// end closes the span with the answer's status and the job's queue and PHP
// times, and queues it for export.
func (t *Tracing) end(s *traceSpan, ctx *fasthttp.RequestCtx, at time.Time, job pool.Timing) {
	status := ctx.Response.StatusCode()
	s.Attrs = append(s.Attrs, otlp.Int("http.response.status_code", status))
	if job.PID != 0 {
		s.Attrs = append(s.Attrs,
			otlp.Float("ferry.queue_wait_seconds", job.Wait.Seconds()),
			otlp.Float("ferry.php_seconds", job.Run.Seconds()),
			otlp.Int("ferry.worker.pid", job.PID),
		)
	}
	if status >= 500 {
		s.Status, s.StatusMsg = otlp.StatusError, fasthttp.StatusMessage(status)
	}
	s.End = at.UnixNano()
	t.exp.Add(s)
}

// Ids come from math/rand/v2's generator, seeded from the system's entropy
// and safe for concurrent use; nothing here is a secret. Zero ids are
// invalid: drawn again.
func newTraceID() (id [16]byte) {
	for id == ([16]byte{}) {
		binary.BigEndian.PutUint64(id[:8], rand.Uint64())
		binary.BigEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() (id [8]byte) {
	for id == ([8]byte{}) {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
