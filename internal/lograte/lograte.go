// Package lograte keeps a flood of identical log records (one per failed
// request while a database is down, say) from burying everything else: within
// a window the first few of a kind pass, the rest are counted, and one record
// then says how many were suppressed.
package lograte

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"
)

// Options tune a Handler; zero fields take the defaults.
type Options struct {
	Window time.Duration // default one second
	Burst  int           // records of a kind passed per window; default 5
	// Keys name the attributes that, with the level and the message, make two
	// records "of a kind". Attributes absent from the list (request ids,
	// durations, pids) do not tell records apart.
	Keys    []string
	MaxKeys int // kinds tracked at once; default 4096
}

// DefaultKeys are the attributes Ferry's records carry their cause in.
var DefaultKeys = []string{"error", "err", "status", "line", "message"}

// New wraps h with the default options and the given window.
func New(h slog.Handler, window time.Duration) slog.Handler {
	return NewWithOptions(h, Options{Window: window})
}

// NewWithOptions wraps h.
func NewWithOptions(h slog.Handler, o Options) slog.Handler {
	if o.Window <= 0 {
		o.Window = time.Second
	}
	if o.Burst <= 0 {
		o.Burst = 5
	}
	if o.Keys == nil {
		o.Keys = DefaultKeys
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 4096
	}
	l := &limiter{opt: o, seed: maphash.MakeSeed(), perShard: max(1, o.MaxKeys/shards)}
	for i := range l.shards {
		l.shards[i].m = map[string]*slot{}
	}
	return &Handler{inner: h, l: l}
}

// Handler is a rate-limiting slog.Handler; it is safe for concurrent use.
type Handler struct {
	inner slog.Handler
	l     *limiter
	// scope holds the groups opened and the key attributes bound by WithGroup
	// and WithAttrs, which are part of every record's kind.
	scope string
}

// shards spreads the kinds over several locks, so loggers on different
// goroutines rarely wait for each other.
const shards = 16

type limiter struct {
	opt      Options
	seed     maphash.Seed
	perShard int
	shards   [shards]shard
}

type shard struct {
	mu    sync.Mutex
	m     map[string]*slot
	swept time.Time
}

// slot counts one kind of record in its current window.
type slot struct {
	start   time.Time
	gen     uint64 // bumped per window, so a late timer cannot report the next one
	n       int
	dropped int
	sample  slog.Record  // the first record suppressed, quoted by the report
	h       slog.Handler // where the report goes
}

func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	scope := h.scope
	for _, a := range as {
		scope = string(h.l.appendAttr([]byte(scope), a))
	}
	return &Handler{inner: h.inner.WithAttrs(as), l: h.l, scope: scope}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &Handler{inner: h.inner.WithGroup(name), l: h.l, scope: h.scope + name + "\x00"}
}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var buf [256]byte
	k := h.key(buf[:0], r)
	sh := &h.l.shards[maphash.Bytes(h.l.seed, k)%shards]
	now := r.Time
	if now.IsZero() {
		now = time.Now()
	}
	sh.mu.Lock()
	s := sh.m[string(k)]
	if s == nil {
		if len(sh.m) >= h.l.perShard && !h.l.sweep(sh, now) {
			sh.mu.Unlock()
			return h.inner.Handle(ctx, r) // too many kinds to track: fail open
		}
		s = &slot{start: now}
		sh.m[string(k)] = s
	}
	var report func()
	if now.Sub(s.start) >= h.l.opt.Window {
		report = h.l.reportLocked(s) // the timer has not run yet
		s.start, s.n = now, 0
	}
	s.n++
	pass := s.n <= h.l.opt.Burst
	if !pass {
		s.dropped++
		if s.dropped == 1 {
			s.sample, s.h = r.Clone(), h.inner
			gen, key := s.gen, string(k)
			time.AfterFunc(s.start.Add(h.l.opt.Window).Sub(now), func() { h.l.expire(sh, key, gen) })
		}
	}
	sh.mu.Unlock()
	if report != nil {
		report()
	}
	if !pass {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// key is the record's kind: level, scope, message and the key attributes.
func (h *Handler) key(b []byte, r slog.Record) []byte {
	b = append(b, byte(r.Level>>8), byte(r.Level))
	b = append(b, h.scope...)
	b = append(b, r.Message...)
	b = append(b, 0)
	r.Attrs(func(a slog.Attr) bool {
		b = h.l.appendAttr(b, a)
		return true
	})
	return b
}

func (l *limiter) appendAttr(b []byte, a slog.Attr) []byte {
	for _, k := range l.opt.Keys {
		if a.Key != k {
			continue
		}
		b = append(b, a.Key...)
		b = append(b, '=')
		v := a.Value.Resolve()
		if err, ok := anyError(v); ok {
			b = append(b, err.Error()...)
		} else {
			b = append(b, v.String()...)
		}
		return append(b, 0)
	}
	return b
}

// reportLocked ends s's window and returns the call that logs how many of its
// records were suppressed, to be made once the shard is unlocked.
func (l *limiter) reportLocked(s *slot) func() {
	s.gen++
	if s.dropped == 0 {
		return nil
	}
	n, sample, h := s.dropped, s.sample, s.h
	s.dropped, s.sample, s.h = 0, slog.Record{}, nil
	return func() {
		r := slog.NewRecord(time.Now(), sample.Level, fmt.Sprintf("%s (suppressed %d similar messages in the last %s)", sample.Message, n, l.opt.Window), 0)
		sample.Attrs(func(a slog.Attr) bool {
			r.AddAttrs(a)
			return true
		})
		h.Handle(context.Background(), r)
	}
}

// expire reports a window that ended with records suppressed; the kind is
// forgotten, so a flood that goes on starts a new window with its next record.
func (l *limiter) expire(sh *shard, key string, gen uint64) {
	sh.mu.Lock()
	s := sh.m[key]
	if s == nil || s.gen != gen {
		sh.mu.Unlock()
		return
	}
	report := l.reportLocked(s)
	delete(sh.m, key)
	sh.mu.Unlock()
	if report != nil {
		report()
	}
}

// sweep forgets the kinds whose window is over with nothing suppressed (those
// with suppressed records go when their timer reports) and tells whether room
// was made. A full shard is swept at most a few times per window.
func (l *limiter) sweep(sh *shard, now time.Time) bool {
	if now.Sub(sh.swept) < l.opt.Window/4 {
		return false
	}
	sh.swept = now
	for k, s := range sh.m {
		if s.dropped == 0 && now.Sub(s.start) >= l.opt.Window {
			delete(sh.m, k)
		}
	}
	return len(sh.m) < l.perShard
}

func anyError(v slog.Value) (error, bool) {
	if v.Kind() != slog.KindAny {
		return nil, false
	}
	err, ok := v.Any().(error)
	return err, ok && err != nil
}
