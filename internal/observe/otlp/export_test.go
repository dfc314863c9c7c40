package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// sink is a collector: it decodes each export with the official types and
// answers with status, once per queued answer, then 200.
type sink struct {
	mu      sync.Mutex
	names   []string
	headers []http.Header
	answers chan int
	got     chan int // spans per export
	hold    chan struct{}
}

func newSink() *sink {
	return &sink{answers: make(chan int, 8), got: make(chan int, 64)}
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.hold != nil {
		<-s.hold
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	var d tracepb.TracesData
	if r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &d) != nil {
		http.Error(w, "bad export", 400)
		return
	}
	select {
	case code := <-s.answers:
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(code)
		return
	default:
	}
	n := 0
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	for _, rs := range d.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.names = append(s.names, sp.Name)
				n++
			}
		}
	}
	s.mu.Unlock()
	s.got <- n
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testConfig(url string) Config {
	c := defaults(url)
	c.ScheduleDelay = time.Hour // only a full batch or Shutdown sends
	c.Timeout = 5 * time.Second
	return c
}

func span(name string) *Span { return &Span{Name: name, TraceID: [16]byte{1}, SpanID: [8]byte{1}} }

func TestFullBatchesGoAtOnceAndShutdownSendsTheRest(t *testing.T) {
	s := newSink()
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.MaxBatch = 3
	e := NewExporter(cfg, nil, "ferry", quiet())
	for i := range 7 {
		e.Add(span(string(rune('a' + i))))
	}
	// Two full batches leave before any timer could fire (an hour).
	if a, b := <-s.got, <-s.got; a != 3 || b != 3 {
		t.Fatalf("batches of %d and %d spans, want 3", a, b)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := <-s.got; n != 1 {
		t.Fatalf("the flush at shutdown sent %d spans, want the 1 left", n)
	}
	if got := strings.Join(s.names, ""); got != "abcdefg" {
		t.Errorf("spans arrived as %q", got)
	}
	e.Add(span("late")) // after Shutdown: dropped, no panic
}

func TestTheScheduleDelaySendsAPartialBatch(t *testing.T) {
	s := newSink()
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.ScheduleDelay = 10 * time.Millisecond
	e := NewExporter(cfg, nil, "ferry", quiet())
	defer e.Shutdown(context.Background())
	e.Add(span("a"))
	select {
	case n := <-s.got:
		if n != 1 {
			t.Fatalf("%d spans", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lone span was never sent")
	}
}

// A collector that does not answer costs spans, never a request: Add does
// not wait however full the queue, and Shutdown ends at its deadline.
func TestASlowCollectorDropsSpansAndNeverBlocks(t *testing.T) {
	s := newSink()
	s.hold = make(chan struct{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer close(s.hold)
	cfg := testConfig(srv.URL)
	cfg.MaxBatch, cfg.MaxQueue = 2, 4
	e := NewExporter(cfg, nil, "ferry", quiet())
	added := make(chan struct{})
	go func() {
		for range 1000 {
			e.Add(span("x"))
		}
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(10 * time.Second):
		t.Fatal("Add blocked behind a collector that does not answer")
	}
	e.mu.Lock()
	dropped := e.dropped
	e.mu.Unlock()
	// At most one batch in the POST, one being gathered and the queue.
	if dropped < 1000-2-2-4 {
		t.Errorf("only %d of 1000 spans dropped with room for 8", dropped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := e.Shutdown(ctx); err == nil {
		t.Error("Shutdown reported success with the collector holding every export")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Shutdown took %s past its 100 ms deadline", d)
	}
}

func TestACollectorThatIsGoneCostsTheDeadlineOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1/traces"
	ln.Close() // nothing listens: every attempt is refused and retried
	e := NewExporter(testConfig(url), nil, "ferry", quiet())
	e.Add(span("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := e.Shutdown(ctx); err == nil {
		t.Error("Shutdown reported success with no collector")
	}

	// Without a deadline of Shutdown's own, the export timeout ends the
	// last batch's retries.
	cfg := testConfig(url)
	cfg.ExportTimeout = 300 * time.Millisecond
	e = NewExporter(cfg, nil, "ferry", quiet())
	e.Add(span("a"))
	done := make(chan struct{})
	go func() { e.Shutdown(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown retried past the export timeout")
	}
}

// 503 and 429 are worth another try (OTLP/HTTP's retryable answers); 400 is not.
func TestRetryableAnswersAreRetried(t *testing.T) {
	s := newSink()
	srv := httptest.NewServer(s)
	defer srv.Close()
	e := NewExporter(testConfig(srv.URL), nil, "ferry", quiet())
	s.answers <- 503
	s.answers <- 429
	e.Add(span("a"))
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := <-s.got; n != 1 || len(s.answers) != 0 {
		t.Fatalf("%d spans after two retryable answers (%d unused)", n, len(s.answers))
	}

	s2 := newSink()
	srv2 := httptest.NewServer(s2)
	defer srv2.Close()
	e2 := NewExporter(testConfig(srv2.URL), nil, "ferry", quiet())
	s2.answers <- 400
	e2.Add(span("a"))
	if err := e2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s2.got) != 0 || e2.dropped != 1 {
		t.Fatalf("a 400 was retried (%d exports) or not counted (%d dropped)", len(s2.got), e2.dropped)
	}
}

func TestEnvironmentTunesTheExporter(t *testing.T) {
	env := map[string]string{
		"OTEL_BSP_SCHEDULE_DELAY":            "50",
		"OTEL_BSP_MAX_QUEUE_SIZE":            "10",
		"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":     "20", // more than the queue: the queue's size
		"OTEL_BSP_EXPORT_TIMEOUT":            "soon",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=se%20cret, x-team = web ,bad header=1",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "2500",
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "1",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://elsewhere/", // Ferry's setting wins
	}
	c, warnings := FromEnv("http://127.0.0.1:4318/v1/traces", func(k string) string { return env[k] })
	if c.ScheduleDelay != 50*time.Millisecond || c.MaxQueue != 10 || c.MaxBatch != 10 || c.ExportTimeout != 30*time.Second ||
		c.Timeout != 2500*time.Millisecond || !c.Gzip || c.Endpoint != "http://127.0.0.1:4318/v1/traces" {
		t.Errorf("config %+v", c)
	}
	if len(c.Headers) != 2 || c.Headers["api-key"] != "se cret" || c.Headers["x-team"] != "web" {
		t.Errorf("headers %v", c.Headers)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "OTEL_BSP_EXPORT_TIMEOUT") || !strings.Contains(warnings[1], "bad header") {
		t.Errorf("warnings %q", warnings)
	}

	s := newSink()
	srv := httptest.NewServer(s)
	defer srv.Close()
	c.Endpoint = srv.URL
	e := NewExporter(c, nil, "ferry", quiet())
	e.Add(span("a"))
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := <-s.got; n != 1 || s.headers[0].Get("Api-Key") != "se cret" || s.headers[0].Get("Content-Encoding") != "gzip" {
		t.Errorf("%d spans, headers %v", n, s.headers[0])
	}
}

func FuzzParsePairs(f *testing.F) {
	f.Add("a=b,c=d%20e")
	f.Add(" , =x,k=%zz,k2=v=w")
	f.Fuzz(func(t *testing.T, s string) {
		m, _ := ParsePairs(s)
		for k, v := range m {
			if k == "" || k != strings.TrimSpace(k) || strings.ContainsAny(k, "=,") || !printable(k) || !printable(v) {
				t.Fatalf("%q gave pair %q=%q", s, k, v)
			}
			// Written back, a pair reads the same.
			var b bytes.Buffer
			b.WriteString(k + "=" + strings.NewReplacer("%", "%25", ",", "%2C", " ", "%20").Replace(v))
			if again, err := ParsePairs(b.String()); err != nil || again[k] != v {
				t.Fatalf("%q=%q does not round-trip: %v %v", k, v, again, err)
			}
		}
	})
}

// OTEL_EXPORTER_OTLP_CERTIFICATE names the roots a collector's certificate
// is checked against, as it did for the SDK's exporter.
func TestACollectorOverTLSWithItsOwnRoot(t *testing.T) {
	s := newSink()
	srv := httptest.NewTLSServer(s)
	defer srv.Close()
	ca := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{{}, {"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca}} {
		c, warnings := FromEnv(srv.URL, func(k string) string { return env[k] })
		if len(warnings) != 0 {
			t.Fatal(warnings)
		}
		c.ScheduleDelay = time.Hour
		e := NewExporter(c, nil, "ferry", quiet())
		e.Add(span("a"))
		e.Shutdown(context.Background())
		if trusted := env["OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"] != ""; len(s.got) == 1 != trusted {
			t.Errorf("with roots %v: %d exports", env, len(s.got))
		}
		if len(s.got) == 1 {
			<-s.got
		}
	}
	if _, w := FromEnv(srv.URL, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent"}[k]
	}); len(w) != 1 {
		t.Errorf("a missing certificate file: warnings %q", w)
	}
}
