package observe

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/valyala/fasthttp"
)

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"":                                     false,
		"abc":                                  true,
		"0f8fad5b-d9cb-469f-a165-70867728950e": true,
		"trace:1/2+3=4@x_y.z":                  true,
		strings.Repeat("a", 128):               true,
		strings.Repeat("a", 129):               false,
		"a b":                                  false,
		"a\r\nX-Evil: 1":                       false,
		"é":                                    false,
		`"quoted"`:                             false,
	} {
		if got := validRequestID([]byte(id)); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestGeneratedIDsAreUniqueAndValid(t *testing.T) {
	a, b := newIDs(), newIDs()
	seen := map[string]bool{}
	for _, g := range []*ids{a, b} {
		for range 1000 {
			id := string(g.next(nil))
			if seen[id] || !validRequestID([]byte(id)) {
				t.Fatalf("id %q repeated or invalid", id)
			}
			seen[id] = true
		}
	}
}

func request(t *testing.T, uri, ua string) *fasthttp.RequestCtx {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 5}, nil)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.SetUserAgent(ua)
	ctx.Response.SetStatusCode(201)
	return &ctx
}

// Whatever the client sends, a JSON line parses and gives it back, and a
// combined line stays one line with its quotes balanced.
func TestAccessLogLinesHoldHostileInput(t *testing.T) {
	ua := "a \"quoted\" \\ agent\x01\x7f tab\t é \xff"
	ctx := request(t, "/p?q=%22x%22", ua)
	e := &entry{ctx: ctx, id: []byte("rid-1"), start: time.Unix(0, 0), duration: 1500 * time.Microsecond, bytes: 42,
		job: pool.Timing{Wait: time.Millisecond, Run: 250 * time.Microsecond, PID: 77}}
	var got map[string]any
	line := appendJSON(nil, e)
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("JSON line does not parse: %v\n%s", err, line)
	}
	if got["user_agent"] != strings.ToValidUTF8(ua, "\uFFFD") || got["request_id"] != "rid-1" || got["status"] != 201.0 ||
		got["pid"] != 77.0 || got["queue_wait"] != 0.001 || got["php"] != 0.00025 || got["remote"] != "10.1.2.3" {
		t.Errorf("JSON line: %s", line)
	}
	c := string(appendCombined(nil, e))
	if strings.Count(c, "\n") != 1 || strings.Count(c, `"`) != 6 {
		t.Errorf("combined line breaks or unbalances quotes: %q", c)
	}
	if !strings.HasPrefix(c, `10.1.2.3 - - [`) || !strings.HasSuffix(c, `" rid-1 0.001500 0.001000 0.000250 77`+"\n") {
		t.Errorf("combined line: %q", c)
	}
}

// A file answer is a body stream that fasthttp sends with sendfile after the
// handler: counting its bytes must not read it into memory.
func TestFrontLeavesBodyStreamsUnread(t *testing.T) {
	f, err := os.Open("observe_test.go")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	m := NewMetrics()
	h := NewFront(func(ctx *fasthttp.RequestCtx) { ctx.SetBodyStream(f, int(st.Size())) },
		FrontOptions{Metrics: m, RequestIDs: true})
	ctx := request(t, "/", "")
	h(ctx)
	if !ctx.Response.IsBodyStream() {
		t.Fatal("the body stream was read into memory")
	}
	ctx.Response.Reset() // closes f
	if got := testutil.ToFloat64(m.out); got != float64(st.Size()) {
		t.Errorf("response bytes %v, want the declared %d", got, st.Size())
	}
}

func TestFrontWithNothingToDoIsTheHandler(t *testing.T) {
	called := 0
	h := NewFront(func(*fasthttp.RequestCtx) { called++ }, FrontOptions{})
	h(request(t, "/", ""))
	if called != 1 {
		t.Fatal("handler not called")
	}
}

// The per-request cost of the front's wrapper: request id, metrics and both;
// run with -bench Front -benchmem (allocations must stay at 0).
func BenchmarkFront(b *testing.B) {
	next := func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello") }
	for _, c := range []struct {
		name string
		opt  FrontOptions
	}{
		{"none", FrontOptions{}},
		{"ids", FrontOptions{RequestIDs: true}},
		{"metrics", FrontOptions{Metrics: NewMetrics()}},
		{"ids+metrics", FrontOptions{RequestIDs: true, Metrics: NewMetrics()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := NewFront(next, c.opt)
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			ctx.Request.SetRequestURI("/")
			b.ReportAllocs()
			for b.Loop() {
				ctx.Request.Header.Del(RequestIDHeader)
				ctx.Response.Reset()
				h(&ctx)
			}
		})
	}
}
