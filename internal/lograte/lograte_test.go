package lograte

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// capture keeps what reaches the wrapped handler.
type capture struct {
	mu   sync.Mutex
	recs []slog.Record
	got  chan struct{}
}

func newCapture() *capture { return &capture{got: make(chan struct{}, 1<<16)} }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *capture) WithGroup(string) slog.Handler            { return c }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	c.recs = append(c.recs, r.Clone())
	c.mu.Unlock()
	c.got <- struct{}{}
	return nil
}

func (c *capture) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ms []string
	for _, r := range c.recs {
		ms = append(ms, r.Message)
	}
	return ms
}

// waitFor waits until n records have arrived.
func (c *capture) waitFor(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for len(c.messages()) < n {
		select {
		case <-c.got:
		case <-deadline:
			t.Fatalf("want %d records, got %q", n, c.messages())
		}
	}
	return c.messages()
}

func record(at time.Time, level slog.Level, msg string, args ...any) slog.Record {
	r := slog.NewRecord(at, level, msg, 0)
	r.Add(args...)
	return r
}

func TestLogRateBurstThenOneSummaryWhenTheWindowEnds(t *testing.T) {
	c := newCapture()
	h := New(c, 200*time.Millisecond)
	t0 := time.Now()
	for i := 0; i < 100; i++ {
		h.Handle(context.Background(), record(t0, slog.LevelError, "request failed", "error", "connection refused", "uri", fmt.Sprint("/r/", i)))
	}
	if got := c.messages(); len(got) != 5 {
		t.Fatalf("within the window want the first 5 records, got %d: %q", len(got), got)
	}
	got := c.waitFor(t, 6)
	if want := "request failed (suppressed 95 similar messages in the last 200ms)"; got[5] != want {
		t.Fatalf("summary %q, want %q", got[5], want)
	}
	c.mu.Lock()
	sum := c.recs[5]
	c.mu.Unlock()
	var attrs []string
	sum.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a.String()); return true })
	if sum.Level != slog.LevelError || strings.Join(attrs, " ") != "error=connection refused uri=/r/5" {
		t.Fatalf("summary level %v attrs %q: want ERROR and the first suppressed record's attrs", sum.Level, attrs)
	}
}

func TestLogRateNextRecordReportsAnEndedWindow(t *testing.T) {
	c := newCapture()
	h := New(c, time.Hour) // the timer never fires during the test
	t0 := time.Now()
	for i := 0; i < 8; i++ {
		h.Handle(context.Background(), record(t0.Add(time.Duration(i)), slog.LevelWarn, "slow", "status", 504))
	}
	h.Handle(context.Background(), record(t0.Add(2*time.Hour), slog.LevelWarn, "slow", "status", 504))
	got := c.messages()
	want := []string{"slow", "slow", "slow", "slow", "slow", "slow (suppressed 3 similar messages in the last 1h0m0s)", "slow"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLogRateTellsKindsApart(t *testing.T) {
	c := newCapture()
	h := NewWithOptions(c, Options{Window: time.Hour, Burst: 1})
	t0 := time.Now()
	send := func(level slog.Level, msg string, args ...any) {
		h.Handle(context.Background(), record(t0, level, msg, args...))
	}
	send(slog.LevelError, "failed", "error", errors.New("a"), "pid", 1)
	send(slog.LevelError, "failed", "error", errors.New("a"), "pid", 2) // same kind: pid is no key
	send(slog.LevelError, "failed", "error", errors.New("b"))
	send(slog.LevelWarn, "failed", "error", errors.New("a"))
	send(slog.LevelError, "other", "error", errors.New("a"))
	send(slog.LevelError, "failed", "status", 500)
	send(slog.LevelError, "failed", "status", 502)
	send(slog.LevelError, "failed", "status", 502)
	if got := len(c.messages()); got != 6 {
		t.Fatalf("want 6 records passed (2 of a kind already seen), got %d", got)
	}
	l := slog.New(h)
	l.With("error", "x").Error("bound")
	l.With("error", "y").Error("bound")
	l.With("req", 1).Error("req")
	l.With("req", 2).Error("req")
	l.WithGroup("g").Error("req")
	if got := len(c.messages()); got != 10 {
		t.Fatalf("want bound key attributes to tell kinds apart and others not: %d records, want 10", got)
	}
}

func TestLogRateConcurrentCountsEveryRecord(t *testing.T) {
	c := newCapture()
	h := NewWithOptions(c, Options{Window: time.Hour, Burst: 5})
	t0 := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				h.Handle(context.Background(), record(t0, slog.LevelError, "down", "error", "refused"))
				h.Handle(context.Background(), record(t0, slog.LevelError, fmt.Sprint("kind ", g%3), "error", "refused"))
			}
		}()
	}
	wg.Wait()
	h.Handle(context.Background(), record(t0.Add(2*time.Hour), slog.LevelError, "down", "error", "refused"))
	got := c.messages()
	passed := 0
	for _, m := range got {
		if m == "down" {
			passed++
		}
	}
	if passed != 6 || !contains(got, "down (suppressed 7995 similar messages in the last 1h0m0s)") {
		t.Fatalf("want 5+1 passed and 7995 suppressed, got %d passed in %d records: %q", passed, len(got), tailOf(got))
	}
	if len(got) != 6+1+3*5 {
		t.Fatalf("want 22 records (kinds 0..2 pass 5 each), got %d", len(got))
	}
}

func TestLogRateTracksBoundedKinds(t *testing.T) {
	c := newCapture()
	h := NewWithOptions(c, Options{Window: time.Hour, MaxKeys: 64}).(*Handler)
	t0 := time.Now()
	for i := 0; i < 10000; i++ {
		h.Handle(context.Background(), record(t0, slog.LevelInfo, "m", "error", fmt.Sprint(i)))
	}
	total := 0
	for i := range h.l.shards {
		total += len(h.l.shards[i].m)
	}
	if total > 64 {
		t.Fatalf("%d kinds tracked, cap is 64", total)
	}
	if got := len(c.messages()); got != 10000 {
		t.Fatalf("distinct records must all pass, %d did", got)
	}
	// A kind met once the window is over makes room again.
	h.Handle(context.Background(), record(t0.Add(2*time.Hour), slog.LevelInfo, "fresh", "error", "z"))
	s := &h.l.shards[0]
	s.mu.Lock()
	n := len(s.m)
	s.mu.Unlock()
	if n > h.l.perShard {
		t.Fatalf("shard over its share: %d", n)
	}
}

// A database outage logged one line per failed request; the log must stay
// small however many requests fail.
func TestLogRateFloodStaysSmall(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	l := slog.New(New(slog.NewTextHandler(w, nil), time.Second))
	start := time.Now()
	for i := 0; i < 100000; i++ {
		l.Error("request failed", "error", "SQLSTATE[HY000] [2002] Connection refused", "uri", "/orders/"+fmt.Sprint(i))
	}
	windows := int(time.Since(start)/time.Second) + 2
	mu.Lock()
	lines := strings.Count(out.String(), "\n")
	mu.Unlock()
	if lines > windows*6 {
		t.Fatalf("%d lines for 100000 identical failures over %d windows", lines, windows)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func tailOf(ss []string) []string { return ss[max(0, len(ss)-5):] }
