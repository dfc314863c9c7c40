package pool

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

const (
	tailLines = 20
	// quietFlush is how long a record waits for more continuation lines: PHP
	// writes a stack trace in one go, so a pause means the record is complete.
	quietFlush = 100 * time.Millisecond
	maxRecord  = 64 << 10
	// A fatal error older than fatalWindow when the worker dies belongs to
	// another request (or another process sharing the stream), not to the death.
	fatalWindow = 5 * time.Second
	// answerSlack allows for the stderr and relay streams being read by
	// different goroutines: an answer may be seen after a fatal PHP printed later.
	answerSlack = time.Second
	keptFatals  = 4
	maxQuote    = 8 << 10
)

// lineLog turns a worker's output into log records tagged with the pid. PHP
// errors keep their level, a stack trace stays with the error that printed it,
// Monolog JSON lines keep their fields, and PHP's second copy of an error (once
// from log_errors, once from display_errors) is dropped. The raw lines are kept
// to quote when the worker fails to boot, and recent fatal errors to explain a
// death.
type lineLog struct {
	log *slog.Logger
	now func() time.Time // nil means time.Now; set before the first Write

	mu     sync.Mutex
	pid    int
	part   []byte
	last   []string   // raw lines, quoted verbatim by bootError
	cur    *phpRecord // record still taking continuation lines
	grew   time.Time  // wall time cur last took a line, for the quiet timer
	timer  *time.Timer
	armed  bool
	prev   phpRecord // last record logged, to spot PHP's second copy
	fatals []fatal   // recent fatal errors, oldest first

	answered atomic.Int64 // clock of the worker's last answer, unix ns
}

type phpRecord struct {
	at     time.Time
	level  slog.Level
	fatal  bool
	logged bool   // "PHP " prefix: written by log_errors rather than display_errors
	msg    string // the message after the label; empty for plain lines
	lines  []string
	size   int
	ok     bool // prev holds a record that may still have a twin
}

type fatal struct {
	at   time.Time
	text string
}

func (l *lineLog) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

func (l *lineLog) setPID(pid int) {
	l.mu.Lock()
	l.pid = pid
	l.mu.Unlock()
}

// jobDone notes that the worker answered a job at the given time (the read
// loop's clock read for the batch), so fatal errors printed well before it
// are not blamed for a later death.
func (l *lineLog) jobDone(at time.Time) { l.answered.Store(at.UnixNano()) }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.line(string(bytes.TrimRight(l.part[:i], "\r")))
		l.part = l.part[i+1:]
	}
	if len(l.part) > maxRecord { // a line without end must not grow forever
		l.line(string(l.part))
		l.part = nil
	}
	return len(p), nil
}

// Close logs what is still held back; the process has exited, so nothing will
// continue it.
func (l *lineLog) Close() error {
	l.mu.Lock()
	l.finishLocked()
	if l.timer != nil {
		l.timer.Stop()
		l.armed = false
	}
	l.mu.Unlock()
	return nil
}

func (l *lineLog) finishLocked() {
	if len(l.part) > 0 {
		l.line(string(bytes.TrimRight(l.part, "\r")))
		l.part = nil
	}
	l.flushLocked()
}

func (l *lineLog) line(s string) {
	if s != "" {
		if len(l.last) == tailLines {
			copy(l.last, l.last[1:])
			l.last = l.last[:tailLines-1]
		}
		l.last = append(l.last, s)
	}
	t := unstamp(s)
	if l.cur != nil && continues(t, l.cur) && l.cur.size+len(s) <= maxRecord {
		l.cur.add(s)
		l.grew = time.Now()
		return
	}
	l.flushLocked()
	if strings.TrimSpace(s) == "" {
		return
	}
	if l.monolog(t) {
		return
	}
	r := classify(t)
	r.at = l.clock()
	r.add(s)
	l.cur = &r
	l.grew = time.Now()
	if l.timer == nil {
		l.timer = time.AfterFunc(quietFlush, l.quiet)
	} else if !l.armed {
		l.timer.Reset(quietFlush)
	}
	l.armed = true
}

func (l *lineLog) quiet() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	if l.cur == nil {
		return
	}
	if wait := quietFlush - time.Since(l.grew); wait > 0 {
		l.timer.Reset(wait)
		l.armed = true
		return
	}
	l.flushLocked()
}

func (l *lineLog) flushLocked() {
	r := l.cur
	if r == nil {
		return
	}
	l.cur = nil
	for len(r.lines) > 1 && strings.TrimSpace(r.lines[len(r.lines)-1]) == "" {
		r.lines = r.lines[:len(r.lines)-1]
	}
	p := l.prev
	if p.ok && r.msg != "" && p.msg == r.msg && p.level == r.level && (r.fatal || p.logged != r.logged) {
		l.prev.ok = false // drop one twin only: a third copy is a new error
		return
	}
	text := strings.Join(r.lines, "\n")
	l.prev = phpRecord{level: r.level, fatal: r.fatal, logged: r.logged, msg: r.msg, ok: true}
	if r.fatal {
		if len(l.fatals) == keptFatals {
			l.fatals = slices.Delete(l.fatals, 0, 1)
		}
		l.fatals = append(l.fatals, fatal{r.at, text})
	}
	l.log.LogAttrs(context.Background(), r.level, "worker output", slog.Int("pid", l.pid), slog.String("line", text))
}

func (r *phpRecord) add(s string) {
	r.lines = append(r.lines, s)
	r.size += len(s) + 1
}

// died logs what is held back and returns the fatal errors PHP reported
// shortly before the worker died, as an attribute for the death record (an
// empty one, which handlers omit, when there were none).
func (l *lineLog) died() slog.Attr {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishLocked()
	since := l.clock().Add(-fatalWindow)
	if a := l.answered.Load(); a != 0 {
		if t := time.Unix(0, a).Add(-answerSlack); t.After(since) {
			since = t
		}
	}
	var b strings.Builder
	for _, f := range l.fatals {
		if f.at.Before(since) || b.Len() >= maxQuote {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.text)
	}
	if b.Len() == 0 {
		return slog.Attr{}
	}
	s := b.String()
	if len(s) > maxQuote {
		s = s[:maxQuote] + "…"
	}
	return slog.String("fatal", s)
}

// printed renders what a worker wrote where a frame was due: text as PHP
// printed it; what follows that is not text (often the handshake frame itself)
// is only counted, or escaped when nothing readable came first.
func printed(b []byte) string {
	n := 0
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		if r == utf8.RuneError && size <= 1 || r < ' ' && r != '\n' && r != '\t' && r != '\r' {
			break
		}
		n += size
	}
	text := strings.TrimRight(string(b[:n]), "\r\n")
	switch {
	case n == len(b):
		return text
	case text == "":
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s\n[followed by %d bytes that are not text]", text, len(b)-n)
}

func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if len(l.part) > 0 {
		lines = append(append([]string(nil), lines...), string(l.part))
	}
	return strings.Join(lines, "\n")
}

// phpLabels are the error types PHP names in its messages, in the order they
// must be tried ("Recoverable fatal error" is not a "Fatal error").
var phpLabels = []struct {
	label string
	level slog.Level
	fatal bool
}{
	{"Fatal error", slog.LevelError, true},
	{"Parse error", slog.LevelError, true},
	{"Recoverable fatal error", slog.LevelError, true},
	{"Warning", slog.LevelWarn, false},
	{"Notice", slog.LevelInfo, false},
	{"Deprecated", slog.LevelInfo, false},
	{"Strict Standards", slog.LevelInfo, false},
	{"Unknown error", slog.LevelError, false},
}

// classify reads the level from PHP's error format: "PHP Warning:  msg" from
// log_errors, "Warning: msg" from display_errors; anything else is info.
func classify(t string) phpRecord {
	rest, logged := strings.CutPrefix(t, "PHP ")
	for _, k := range phpLabels {
		if m, ok := strings.CutPrefix(rest, k.label+":"); ok {
			return phpRecord{level: k.level, fatal: k.fatal, logged: logged, msg: strings.TrimSpace(m)}
		}
	}
	return phpRecord{level: slog.LevelInfo}
}

// unstamp drops the "[date] " that error_log adds when it names a file (such
// as /dev/stderr), so those lines read like the others.
func unstamp(s string) string {
	if len(s) > 0 && s[0] == '[' {
		if i := strings.Index(s, "] PHP "); i > 0 && !strings.ContainsRune(s[:i], '\n') {
			return s[i+2:]
		}
	}
	return s
}

// continues tells whether t belongs to the record before it: stack traces
// (PHP's own and Xdebug's), their "thrown in" and "Next" parts, and indented
// or blank lines.
func continues(t string, cur *phpRecord) bool {
	switch {
	case t == "", t[0] == ' ', t[0] == '\t':
		return true
	case strings.HasPrefix(t, "Stack trace:"), strings.HasPrefix(t, "PHP Stack trace:"), strings.HasPrefix(t, "PHP  "):
		return true
	case strings.HasPrefix(t, "Next ") && cur.level >= slog.LevelError:
		return true
	case t[0] == '#':
		i := 1
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i > 1 && i < len(t) && t[i] == ' '
	}
	return false
}
