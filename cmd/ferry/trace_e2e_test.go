package main

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP traces endpoint that keeps what it is sent, the
// way a collector would decode it. TracesData is ExportTraceServiceRequest's
// twin on the wire (field 1, repeated ResourceSpans) without the collector
// package, whose grpc service stubs would put grpc back in go.mod.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	got   chan struct{}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req tracepb.TracesData
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", 400)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	select {
	case c.got <- struct{}{}:
	default:
	}
	// An empty ExportTraceServiceResponse: full success.
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) find(traceID string) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if hex.EncodeToString(s.TraceId) == traceID {
			return s
		}
	}
	return nil
}

func TestTracingJoinsTheClientsTraceAndHandsPHPItsSpan(t *testing.T) {
	col := &collector{got: make(chan struct{}, 1)}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // milliseconds: export at once
	s := startFerry(t, opsConfig("  tracing:\n    enabled: true\n    endpoint: \""+srv.URL+"/v1/traces\"\n", "", ""))

	const traceID, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("GET", s.url+"/echo?x=1", nil)
	req.Header.Set("Traceparent", "00-"+traceID+"-"+clientSpan+"-01")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	e := decode(t, readAll(t, resp))
	php := e.Headers["Traceparent"]
	if len(php) != 1 || !strings.HasPrefix(php[0], "00-"+traceID+"-") || strings.Contains(php[0], clientSpan) {
		t.Fatalf("PHP saw traceparent %v: want the client's trace with Ferry's span as parent", php)
	}
	var span *tracepb.Span
	until(t, "the span to reach the collector", 10*time.Second, func() bool {
		span = col.find(traceID)
		return span != nil
	})
	if hex.EncodeToString(span.ParentSpanId) != clientSpan || !strings.Contains(php[0], "-"+hex.EncodeToString(span.SpanId)+"-") {
		t.Errorf("span %x parent %x; PHP's traceparent %s", span.SpanId, span.ParentSpanId, php[0])
	}
	if span.Kind != tracepb.Span_SPAN_KIND_SERVER || span.Name != "GET" {
		t.Errorf("span kind %v name %q", span.Kind, span.Name)
	}
	attrs := map[string]bool{}
	for _, a := range span.Attributes {
		attrs[a.Key] = true
		if a.Key == "http.response.status_code" && a.Value.GetIntValue() != 200 {
			t.Errorf("status attribute %v", a.Value)
		}
	}
	for _, k := range []string{"http.request.method", "url.path", "ferry.queue_wait_seconds", "ferry.php_seconds", "ferry.worker.pid"} {
		if !attrs[k] {
			t.Errorf("span lacks %s: %v", k, span.Attributes)
		}
	}

	// Without a traceparent, Ferry starts the trace and PHP still gets one.
	resp, err = client.Get(s.url + "/echo")
	if err != nil {
		t.Fatal(err)
	}
	e = decode(t, readAll(t, resp))
	if tp := e.Headers["Traceparent"]; len(tp) != 1 || len(tp[0]) != 55 {
		t.Errorf("new trace: PHP saw %v", tp)
	}
}

// A path that is not UTF-8 is a client's to send: its span (and the spans
// batched with it) must still reach the collector, whose protobuf decoder
// refuses invalid UTF-8 in a string.
func TestTracingKeepsTheSpanOfAPathThatIsNotUTF8(t *testing.T) {
	col := &collector{got: make(chan struct{}, 1)}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	s := startFerry(t, opsConfig("  tracing:\n    enabled: true\n    endpoint: \""+srv.URL+"/v1/traces\"\n", "", ""))
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4737"
	req, _ := http.NewRequest("GET", s.url+"/echo", nil)
	req.URL.RawPath, req.URL.Path = "/echo%ff", "/echo\xff"
	req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	var span *tracepb.Span
	until(t, "the span to reach the collector", 10*time.Second, func() bool {
		span = col.find(traceID)
		return span != nil
	})
	for _, a := range span.Attributes {
		if a.Key == "url.path" && a.Value.GetStringValue() != "/echo\uFFFD" {
			t.Errorf("url.path %q", a.Value.GetStringValue())
		}
	}
}
