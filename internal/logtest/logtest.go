// Package logtest is for tests that wait on what a component logged: Recorder
// is a slog.Handler that keeps every record, its attributes flattened to text.
// The pool's tests and phplog's read worker output through it.
package logtest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// Record is one log record as a test reads it.
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// Recorder keeps every record it handles; the zero value is ready.
type Recorder struct {
	mu   sync.Mutex
	recs []Record
}

func (h *Recorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *Recorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *Recorder) WithGroup(string) slog.Handler            { return h }

func (h *Recorder) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool { rec.Attrs[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

// All is a copy of the records so far.
func (h *Recorder) All() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Record(nil), h.recs...)
}

// Wait polls until some record satisfies ok, for at most five seconds: the
// records come from other goroutines (a worker's output reader, say).
func (h *Recorder) Wait(t testing.TB, what string, ok func(Record) bool) Record {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range h.All() {
			if ok(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record %s; got:\n%s", what, h.Dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Dump is every record, one per line, for a failure message.
func (h *Recorder) Dump() string {
	var b strings.Builder
	for _, r := range h.All() {
		b.WriteString(r.Level.String() + " " + r.Msg)
		for k, v := range r.Attrs {
			b.WriteString(" " + k + "=" + strings.ReplaceAll(v, "\n", `\n`))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
