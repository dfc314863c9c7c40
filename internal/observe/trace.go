package observe

import (
	"context"
	"fmt"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing makes an OpenTelemetry span per request, exported over OTLP/HTTP
// in batches, and hands PHP a W3C traceparent naming that span, so the
// spans PHP makes join the client's trace under it.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
}

// NewTracing exports to endpoint, an OTLP/HTTP traces URL such as
// http://127.0.0.1:4318/v1/traces. ratio is the share of traces started
// here that are kept; a client's sampling decision is followed.
func NewTracing(endpoint, service string, ratio float64) (*Tracing, error) {
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", service))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	)
	return &Tracing{provider: tp, tracer: tp.Tracer("ferry")}, nil
}

// Shutdown sends the spans still buffered.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// start opens the request's span, as a child of the client's traceparent if
// it sent a valid one, and puts this span's traceparent on the request.
func (t *Tracing) start(ctx *fasthttp.RequestCtx, at time.Time) trace.Span {
	h := headerCarrier{&ctx.Request.Header}
	parent := t.prop.Extract(context.Background(), h)
	sctx, span := t.tracer.Start(parent, string(ctx.Method()),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(at),
		trace.WithAttributes(
			attribute.String("http.request.method", string(ctx.Method())),
			attribute.String("url.path", string(ctx.Path())),
			attribute.String("network.protocol.version", string(ctx.Request.Header.Protocol())),
			attribute.String("client.address", ctx.RemoteIP().String()),
		))
	// A client's tracestate is its own; the traceparent is always ours.
	ctx.Request.Header.Del("Traceparent")
	t.prop.Inject(sctx, h)
	return span
}

// end closes the span with the answer's status and the job's queue and PHP
// times.
func (t *Tracing) end(span trace.Span, ctx *fasthttp.RequestCtx, at time.Time, job pool.Timing) {
	status := ctx.Response.StatusCode()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if job.PID != 0 {
		span.SetAttributes(
			attribute.Float64("ferry.queue_wait_seconds", job.Wait.Seconds()),
			attribute.Float64("ferry.php_seconds", job.Run.Seconds()),
			attribute.Int("ferry.worker.pid", job.PID),
		)
	}
	if status >= 500 {
		span.SetStatus(codes.Error, fasthttp.StatusMessage(status))
	}
	span.End(trace.WithTimestamp(at))
}

// headerCarrier lets the propagator read and write fasthttp's request headers.
type headerCarrier struct{ h *fasthttp.RequestHeader }

func (c headerCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c headerCarrier) Keys() []string {
	var keys []string
	c.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
