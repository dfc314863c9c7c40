package observe

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

const (
	tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	pid = "00f067aa0ba902b7"
)

func TestTraceparentGrammar(t *testing.T) {
	for h, want := range map[string]bool{
		"00-" + tid + "-" + pid + "-01":                     true,
		"00-" + tid + "-" + pid + "-00":                     true,
		"00-" + tid + "-" + pid + "-03":                     true,  // sampled and random
		"00-" + tid + "-" + pid + "-04":                     false, // a reserved flag in version 00
		"00-" + tid + "-" + pid + "-01-":                    false, // version 00 has exactly four fields
		"00-" + tid + "-" + pid + "-01-x":                   false,
		"01-" + tid + "-" + pid + "-01-x":                   true, // a later version may add fields
		"01-" + tid + "-" + pid + "-ff":                     true,
		"01-" + tid + "-" + pid + "-01x":                    false,
		"ff-" + tid + "-" + pid + "-01":                     false, // ff is invalid
		"00-" + strings.ToUpper(tid) + "-" + pid + "-01":    false,
		"00-" + strings.Repeat("0", 32) + "-" + pid + "-01": false,
		"00-" + tid + "-0000000000000000-01":                false,
		"00-" + tid[1:] + "-" + pid + "-01":                 false,
		"00-" + tid + "-" + pid:                             false,
		"":                                                  false,
	} {
		if _, ok := parseTraceparent(h); ok != want {
			t.Errorf("parseTraceparent(%q) = %v, want %v", h, ok, want)
		}
	}
}

// The W3C grammar as a regular expression: the reference the parser is
// fuzzed against.
var traceparentRE = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$`)

func FuzzTraceparent(f *testing.F) {
	f.Add("00-" + tid + "-" + pid + "-01")
	f.Add("cc-" + tid + "-" + pid + "-09-what-ever")
	f.Fuzz(func(t *testing.T, h string) {
		sc, ok := parseTraceparent(h)
		m := traceparentRE.FindStringSubmatch(h)
		want := m != nil && m[1] != "ff" && m[2] != strings.Repeat("0", 32) && m[3] != strings.Repeat("0", 16) &&
			(m[1] != "00" || (m[5] == "" && m[4] <= "03"))
		if ok != want {
			t.Fatalf("parseTraceparent(%q) = %v, the grammar says %v", h, ok, want)
		}
		if !ok {
			return
		}
		out := string(appendTraceparent(nil, sc))
		if out != "00-"+m[2]+"-"+m[3]+"-"+out[53:] || out[53:] > "03" {
			t.Fatalf("%q written back as %q", h, out)
		}
		if again, ok := parseTraceparent(out); !ok || again != sc {
			t.Fatalf("%q does not read back", out)
		}
	})
}

func TestTracestate(t *testing.T) {
	for in, want := range map[string]string{
		"congo=t61rcWkgMzE":                      "congo=t61rcWkgMzE",
		" rojo=00f067aa0ba902b7 ,, congo=t61 \t": "rojo=00f067aa0ba902b7,congo=t61",
		"tenant1@sys=x,a/b*c_d-e=v w":            "tenant1@sys=x,a/b*c_d-e=v w",
		"Upper=x":                                "",
		"a=1,a=2":                                "", // duplicate key
		"a=":                                     "",
		"a=x=y":                                  "",
		"a=x ,b":                                 "",
		"1abc=x":                                 "", // a simple key starts with a letter
		"t@1sys=x":                               "", // a system id too
		strings.Repeat("k", 257) + "=v":          "",
		"k=" + strings.Repeat("v", 257):          "",
		"":                                       "",
	} {
		if got := normalTracestate(in); got != want {
			t.Errorf("normalTracestate(%q) = %q, want %q", in, got, want)
		}
	}
	var many []string
	for i := range 33 {
		many = append(many, "k"+strings.Repeat("x", i)+"=v")
	}
	if normalTracestate(strings.Join(many[:32], ",")) == "" || normalTracestate(strings.Join(many, ",")) != "" {
		t.Error("32 members are allowed, 33 are not")
	}
}

func FuzzTracestate(f *testing.F) {
	f.Add("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")
	f.Add("t@s=a b,x=")
	f.Fuzz(func(t *testing.T, h string) {
		n := normalTracestate(h)
		if n == "" {
			return
		}
		if again := normalTracestate(n); again != n {
			t.Fatalf("%q normalizes to %q, then to %q", h, n, again)
		}
		if strings.ContainsAny(n, "\t\r\n") || strings.Contains(n, ", ") || strings.Contains(n, " ,") {
			t.Fatalf("%q normalizes to %q", h, n)
		}
	})
}

// collect runs a collector for Tracing and returns the spans it was sent by
// the time Shutdown returns.
func collect(t *testing.T, ratio float64, run func(*Tracing)) []*tracepb.Span {
	t.Helper()
	var spans []*tracepb.Span
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var d tracepb.TracesData
		if err := proto.Unmarshal(b, &d); err != nil {
			t.Errorf("export does not decode: %v", err)
		}
		for _, rs := range d.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}))
	defer srv.Close()
	tr, err := NewTracing(srv.URL+"/v1/traces", "svc", ratio, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	run(tr)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spans
}

// serve passes one request with the given traceparent through the tracing
// and returns the traceparent PHP would see.
func serve(t *testing.T, tr *Tracing, parent, state string, status int) string {
	ctx := request(t, "/p%ff", "ua")
	if parent != "" {
		ctx.Request.Header.Set("Traceparent", parent)
	}
	if state != "" {
		ctx.Request.Header.Set("Tracestate", state)
	}
	at := time.Unix(1000, 0)
	s := tr.start(ctx, at)
	ctx.Response.SetStatusCode(status)
	if s != nil {
		tr.end(s, ctx, at.Add(time.Millisecond), pool.Timing{PID: 42, Run: time.Millisecond})
	}
	php := string(ctx.Request.Header.Peek("Traceparent"))
	if _, ok := parseTraceparent(php); !ok {
		t.Fatalf("PHP would see traceparent %q", php)
	}
	return php
}

// ParentBased(TraceIDRatioBased): a client's decision is followed either
// way; a trace started here is kept by the ratio; PHP always gets a
// traceparent naming Ferry's span with the decision in its flags.
func TestSamplingFollowsTheClientAndTheRatio(t *testing.T) {
	var php []string
	spans := collect(t, 0, func(tr *Tracing) {
		php = append(php,
			serve(t, tr, "", "", 200), // not kept: ratio 0
			serve(t, tr, "00-"+tid+"-"+pid+"-01", " rojo=1 , congo=2", 503), // kept: the client sampled
			serve(t, tr, "00-"+tid+"-"+pid+"-00", "", 200),                  // not kept: the client did not
		)
	})
	if !strings.HasSuffix(php[0], "-00") || strings.Contains(php[0], tid) {
		t.Errorf("new unsampled trace: %q", php[0])
	}
	if !strings.HasPrefix(php[1], "00-"+tid+"-") || strings.Contains(php[1], pid) || !strings.HasSuffix(php[1], "-01") {
		t.Errorf("sampled child: %q", php[1])
	}
	if !strings.HasPrefix(php[2], "00-"+tid+"-") || !strings.HasSuffix(php[2], "-00") {
		t.Errorf("unsampled child: %q", php[2])
	}
	if len(spans) != 1 {
		t.Fatalf("%d spans exported, want the sampled one", len(spans))
	}
	s := spans[0]
	if hex.EncodeToString(s.TraceId) != tid || hex.EncodeToString(s.ParentSpanId) != pid || php[1][36:52] != hex.EncodeToString(s.SpanId) {
		t.Errorf("span %x/%x parent %x; PHP saw %s", s.TraceId, s.SpanId, s.ParentSpanId, php[1])
	}
	if s.TraceState != "rojo=1,congo=2" || s.Flags != 0x301 || s.Kind != tracepb.Span_SPAN_KIND_SERVER || s.Name != "GET" {
		t.Errorf("state %q flags %#x kind %v name %q", s.TraceState, s.Flags, s.Kind, s.Name)
	}
	if s.Status.Code != tracepb.Status_STATUS_CODE_ERROR || s.Status.Message != "Service Unavailable" ||
		s.EndTimeUnixNano-s.StartTimeUnixNano != uint64(time.Millisecond) {
		t.Errorf("status %v, %d..%d", s.Status, s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	got := map[string]string{}
	for _, a := range s.Attributes {
		got[a.Key] = a.Value.String()
	}
	for k, want := range map[string]string{
		"url.path": "string_value:\"/p\uFFFD\"", "http.response.status_code": "int_value:503", "ferry.worker.pid": "int_value:42",
		"client.address": "string_value:\"10.1.2.3\"", "network.protocol.version": "string_value:\"HTTP/1.1\"",
	} {
		if strings.ReplaceAll(got[k], " ", "") != strings.ReplaceAll(want, " ", "") {
			t.Errorf("%s = %s, want %s", k, got[k], want)
		}
	}
}

func TestRatioOneKeepsEveryNewTrace(t *testing.T) {
	spans := collect(t, 1, func(tr *Tracing) {
		for range 20 {
			serve(t, tr, "garbage", "", 200) // an invalid traceparent starts a new trace
		}
	})
	if len(spans) != 20 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, s := range spans {
		if len(s.ParentSpanId) != 0 || s.Flags != uint32(0x101) {
			t.Errorf("root span with parent %x flags %#x", s.ParentSpanId, s.Flags)
		}
	}
}
