// Package leaks keeps what the workers' leak watch (pool.leak_watch) found:
// each finding once, however many workers report it and however often they
// are replaced, for `ferry leaks` and the metrics.
package leaks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Prefix starts the payload of a leak report frame (CONTROL|JSON), which is
// {"leak":{...}} as docs/protocol.md describes.
var Prefix = []byte(`{"leak":`)

// Limits on what a worker may make the server keep: a worker is the
// application's code, and a bug in it must not grow the server.
const (
	MaxFindings = 1000
	maxField    = 1024
)

// Finding is one piece of state that requests leave behind.
type Finding struct {
	Kind    string `json:"kind"`    // static, global, ini, timezone, fd, memory, shared, ...
	Subject string `json:"subject"` // what leaks: "App\Registry::$items", "memory_limit"
	Message string `json:"message"`
	Request string `json:"request"` // "GET /report", or the suspects when not one request
	Method  string `json:"method,omitempty"`
	Path    string `json:"path,omitempty"`
	// PID is the worker that reported it first; Requests, how many requests
	// that worker had served by then.
	PID      int       `json:"pid"`
	Requests int       `json:"requests"`
	First    time.Time `json:"first_seen"`
	Last     time.Time `json:"last_seen"`
	Reports  int       `json:"reports"` // workers that found it (each reports a finding once)
}

// Parse decodes a leak report frame's payload.
func Parse(payload []byte) (Finding, error) {
	var msg struct {
		Leak *Finding `json:"leak"`
	}
	if !bytes.HasPrefix(payload, Prefix) {
		return Finding{}, errors.New(`not a leak report (want {"leak":...})`)
	}
	if err := json.Unmarshal(payload, &msg); err != nil {
		return Finding{}, fmt.Errorf("leak report: %w", err)
	}
	f := msg.Leak
	if f == nil || f.Kind == "" || f.Subject == "" || f.Message == "" {
		return Finding{}, errors.New("leak report without kind, subject or message")
	}
	for _, s := range []*string{&f.Kind, &f.Subject, &f.Message, &f.Request, &f.Method, &f.Path} {
		*s = clip(*s)
	}
	return *f, nil
}

func clip(s string) string {
	if len(s) <= maxField {
		return s
	}
	s = s[:maxField]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

// Store is safe for concurrent use. The zero value is not: use NewStore.
type Store struct {
	mu      sync.Mutex
	byKey   map[string]*Finding
	order   []*Finding
	kinds   map[string]int
	dropped int
}

func NewStore() *Store {
	return &Store{byKey: map[string]*Finding{}, kinds: map[string]int{}}
}

// Add records f, seen now. It returns true when f is new; a finding already
// known (same kind and subject, from another worker or an earlier one) only
// counts one more report.
func (s *Store) Add(f Finding, now time.Time) bool {
	key := f.Kind + "\x00" + f.Subject
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.byKey[key]; old != nil {
		old.Reports++
		old.Last = now
		return false
	}
	if len(s.order) >= MaxFindings {
		s.dropped++
		return false
	}
	f.First, f.Last, f.Reports = now, now, 1
	s.byKey[key] = &f
	s.order = append(s.order, &f)
	s.kinds[f.Kind]++
	return true
}

// List returns the findings in the order they were first reported.
func (s *Store) List() []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Finding, len(s.order))
	for i, f := range s.order {
		out[i] = *f
	}
	return out
}

// Kinds counts the findings by kind, sorted by kind; dropped is how many new
// ones were refused past MaxFindings.
func (s *Store) Kinds() (kinds []KindCount, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.kinds {
		kinds = append(kinds, KindCount{k, n})
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Kind < kinds[j].Kind })
	return kinds, s.dropped
}

// KindCount is one line of Kinds.
type KindCount struct {
	Kind  string
	Count int
}

// Text renders findings for a terminal, one paragraph each.
func Text(fs []Finding) string {
	if len(fs) == 0 {
		return "no leaks found\n"
	}
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "[%s] %s\n", f.Kind, f.Message)
		workers := "1 worker"
		if f.Reports != 1 {
			workers = fmt.Sprintf("%d workers", f.Reports)
		}
		fmt.Fprintf(&b, "    first seen %s in worker %d after %d requests; found by %s\n",
			f.First.Local().Format("2006-01-02 15:04:05"), f.PID, f.Requests, workers)
	}
	return b.String()
}
